/**
 * `patchbay trust [path]`: trust a folder's `.patchbay/config.json` (src/config/trust.ts) after
 * showing what it enables; `--revoke [path]` forgets it; `--list` shows every trusted folder.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig, patchbayHome, workspaceConfigPath } from '../config/load.js';
import { formatHeldSetting } from '../config/held-back.js';
import { usageError } from './help.js';
import { contentHash, folderKey, listTrust, recordTrust, revokeTrust } from '../config/trust.js';


export async function runTrust(args: string[]): Promise<void> {
  const flags = new Set(args.filter((a) => a.startsWith('-')));
  const paths = args.filter((a) => !a.startsWith('-'));
  const unknown = [...flags].filter((f) => !['--revoke', '--list', '--help', '-h'].includes(f));
  if (unknown.length) return usageError('trust', `Unknown option ${unknown[0]}`);
  if (paths.length > 1 || (flags.has('--list') && (paths.length || flags.has('--revoke')))) return usageError('trust', 'one folder at most, and --list alone');
  const home = patchbayHome(process.env);
  if (flags.has('--list')) return list(home);
  const root = resolve(paths[0] ?? process.cwd());
  if (flags.has('--revoke')) {
    const done = revokeTrust(home, root);
    process.stdout.write(done ? `${folderKey(root)} is no longer trusted.\n` : `${folderKey(root)} was not trusted.\n`);
    return;
  }
  if (!existsSync(root)) {
    process.stderr.write(`No such folder: ${root}\n`);
    process.exitCode = 1;
    return;
  }
  const { workspaces } = loadConfig({ roots: [root], env: process.env });
  const w = workspaces[0];
  if (!w) {
    process.stdout.write(`${workspaceConfigPath(root)} does not exist or could not be read: there is nothing to trust.\n`);
    return;
  }
  if (w.state === 'trusted') {
    process.stdout.write(`${w.root} is already trusted (for the current content of ${w.file}).\n`);
    return;
  }
  process.stdout.write(
    w.settings.length
      ? `${w.file} enables:\n${w.settings.map((s) => `  - ${formatHeldSetting(s)}`).join('\n')}\n`
      : `${w.file} holds no settings that need trust.\n`,
  );
  recordTrust(home, w.root, w.sha256);
  process.stdout.write(`Trusted ${folderKey(w.root)}. patchbay applies these settings the next time it starts there (in a running chat: /trust).\n`);
}

function list(home: string): void {
  const entries = listTrust(home);
  if (!entries.length) {
    process.stdout.write('No trusted folders.\n');
    return;
  }
  for (const e of entries) {
    const file = workspaceConfigPath(e.folder);
    let now: string;
    try {
      now = contentHash(readFileSync(file, 'utf8')) === e.sha256 ? 'trusted' : 'config changed since: not trusted until you trust it again';
    } catch {
      now = 'no config file now';
    }
    process.stdout.write(`${e.folder}  (trusted ${e.trustedAt}; ${now})\n`);
  }
}
