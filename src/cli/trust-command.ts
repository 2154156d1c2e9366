/**
 * `patchbay trust [path]`: trust a folder's `.patchbay/config.json` (src/config/trust.ts) after
 * showing what it enables, whole, and asking (`--yes` trusts without asking, and is required
 * without a terminal); `--revoke [path]` forgets it; `--list` shows every trusted folder.
 */
import { existsSync } from 'node:fs';
import { readConfigText } from '../config/config-file.js';
import { resolve } from 'node:path';
import { loadConfig, patchbayHome, workspaceConfigPath } from '../config/load.js';
import { heldSettingsList } from '../config/held-back.js';
import { escapeControlChars } from '../util/text.js';
import { askTrust, canAsk } from './chat-trust.js';
import { usageError } from './help.js';
import { contentHash, folderKey, listTrust, recordTrust, revokeTrust, trustRecord } from '../config/trust.js';
import { changedFiles, coveredFilesNow } from '../config/trusted-files.js';

/** Paths as shown: a folder name could carry escape sequences. */
const show = escapeControlChars;

export async function runTrust(args: string[]): Promise<void> {
  const flags = new Set(args.filter((a) => a.startsWith('-')));
  const paths = args.filter((a) => !a.startsWith('-'));
  const unknown = [...flags].filter((f) => !['--revoke', '--list', '--yes', '-y', '--help', '-h'].includes(f));
  if (unknown.length) return usageError('trust', `Unknown option ${unknown[0]}`);
  if (paths.length > 1 || (flags.has('--list') && (paths.length || flags.has('--revoke')))) return usageError('trust', 'one folder at most, and --list alone');
  const home = patchbayHome(process.env);
  if (flags.has('--list')) return list(home);
  const root = resolve(paths[0] ?? process.cwd());
  if (flags.has('--revoke')) {
    const done = revokeTrust(home, root);
    process.stdout.write(done ? `${show(folderKey(root))} is no longer trusted.\n` : `${show(folderKey(root))} was not trusted.\n`);
    return;
  }
  if (!existsSync(root)) {
    process.stderr.write(`No such folder: ${show(root)}\n`);
    process.exitCode = 1;
    return;
  }
  const { workspaces, config } = loadConfig({ roots: [root], env: process.env });
  const w = workspaces[0];
  // The folder's agent files, skills, commands and hook scripts, hashed now: what is listed is what is trusted.
  const files = await coveredFilesNow(w?.root ?? root, { env: process.env, config });
  const record = trustRecord(home, root);
  const changed = record?.files ? changedFiles(files, record.files) : Object.keys(files);
  const filesUpToDate = Boolean(record?.files) && !changed.length;
  // What is shown is what is trusted: the hash of the content listed here, never the file as it is
  // after the question (a `git pull` in between leaves the folder untrusted: "changed").
  let sha256: string;
  if (!w) {
    if (record && filesUpToDate) {
      process.stdout.write(`${show(folderKey(root))} is already trusted.\n`);
      return;
    }
    // No config file: trusting the folder still lets patchbay run the programs it ships
    // (node_modules/.bin/typescript-language-server); a config file added later is "changed".
    if (!record) process.stdout.write(`${show(workspaceConfigPath(root))} does not exist: trusting this folder lets patchbay run programs it ships (node_modules/.bin/typescript-language-server).\n`);
    sha256 = record?.sha256 ?? contentHash('');
  } else {
    if (w.state === 'trusted' && filesUpToDate) {
      process.stdout.write(`${show(w.root)} is already trusted (for the current content of ${show(w.file)} and its agent, skill, command and hook files).\n`);
      return;
    }
    if (w.state !== 'trusted') {
      const changedConfig = w.state === 'changed' ? ' (it changed since you trusted this folder)' : '';
      process.stdout.write(
        w.settings.length
          ? `${show(w.file)}${changedConfig} enables:\n${heldSettingsList(w.settings)}\n`
          : `${show(w.file)}${changedConfig} holds no settings that need trust; trusting this folder lets patchbay run programs it ships (node_modules/.bin/typescript-language-server).\n`,
      );
    }
    sha256 = w.sha256;
  }
  if (changed.length) {
    const why = record?.files ? 'new or changed since you trusted this folder' : record ? 'not recorded when you trusted this folder' : 'as they are now';
    process.stdout.write(`Its agent, skill, command and hook files (${why}):\n${changed.map((f) => `  - ${show(f)}`).join('\n')}\n`);
  }
  if (!flags.has('--yes') && !flags.has('-y')) {
    if (!canAsk()) {
      process.stderr.write('Not trusted: there is no terminal to ask on. Run it again with --yes to trust what is listed above.\n');
      process.exitCode = 1;
      return;
    }
    if (!(await askTrust())) {
      process.stdout.write('Not trusted.\n');
      return;
    }
  }
  recordTrust(home, w?.root ?? root, sha256, files);
  const applies = w?.settings.length ? 'applies these settings the next time it starts there (in a running chat: /trust)' : 'uses what the folder ships the next time it starts there';
  process.stdout.write(`Trusted ${show(folderKey(root))}. patchbay ${applies}.\n`);
}

async function list(home: string): Promise<void> {
  const entries = listTrust(home);
  if (!entries.length) {
    process.stdout.write('No trusted folders.\n');
    return;
  }
  for (const e of entries) {
    const file = workspaceConfigPath(e.folder);
    const read = readConfigText(file);
    const now =
      read.kind === 'text'
        ? contentHash(read.text) === e.sha256
          ? 'trusted'
          : 'config changed since: not trusted until you trust it again'
        : read.kind === 'refused'
          ? `its config file ${read.message.replace(/; ignored$/, '')}`
          : 'no config file now';
    process.stdout.write(`${show(e.folder)}  (trusted ${e.trustedAt}; ${now}${await filesNow(e.folder, e.files)})\n`);
  }
}

/** `; 2 agent, skill, command or hook files new or changed since`: what of the folder's other files is held back now. */
async function filesNow(folder: string, recorded: Record<string, string> | undefined): Promise<string> {
  if (!recorded) return '; its agent, skill, command and hook files were not recorded: trust it again to cover them';
  if (!existsSync(folder)) return '';
  const { config } = loadConfig({ roots: [folder], env: process.env });
  const changed = changedFiles(await coveredFilesNow(folder, { env: process.env, config }), recorded);
  return changed.length ? `; new or changed since, held back until you trust it again: ${changed.map(show).join(', ')}` : '';
}
