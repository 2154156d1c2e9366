/**
 * The files of a workspace folder that trusting it lets do more (issue 31), besides its
 * `.patchbay/config.json`: what `patchbay trust` and `/trust` record a digest of (trust.ts
 * `files`), so a file new or changed since is held back again as an untrusted folder's is:
 *
 * - agent files (`.patchbay/agents/*.md`, `.eca/agents/*.md`): their tool auto-approvals;
 * - skill files (`SKILL.md`) and custom command files in the folder's own places and the config's
 *   entries inside it: whether a link out of the folder is followed;
 * - hook scripts: a hook action's `file` relative to the folder is run at all.
 *
 * Each is recorded by its path relative to the folder (trust.ts `trustedFileKey`) → the sha256 of
 * its bytes (a link's target's).
 */
import { readFileSync, statSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { agentFileSources, listAgentFiles, type AgentFileKind } from './agent-files.js';
import { parseJsonc } from './jsonc.js';
import { contentHash, trustedFileKey } from './trust.js';
import { workspaceConfigPath } from './load.js';
import type { Config } from './schema.js';

export interface CoveredFilesOptions {
  env: NodeJS.ProcessEnv;
  homeDir?: string;
  /** The merged config's `skills`, `commands` and `hooks` (the user's own hooks may name a file of the folder). */
  config?: Pick<Config, 'skills' | 'commands' | 'hooks'>;
  /** The folder's own config file as written: its `hooks` count although an untrusted folder's are held back. */
  workspaceConfigText?: string;
}

/** Past this, a file is not hashed (not recorded: held back if it matters). Agent, skill and command files are refused past 256 KiB anyway. */
const MAX_HASHED_BYTES = 4 * 1024 * 1024;
const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

const MATCH: Record<Exclude<AgentFileKind, 'rules'>, (name: string) => boolean> = {
  agents: (n) => /\.md$/i.test(n),
  skills: (n) => n === 'SKILL.md',
  commands: (n) => n.toLowerCase().endsWith('.md'),
};

/** The folder's covered files now: relative path → sha256. Files that cannot be read are left out (so they are "new" if they appear). */
export async function coveredFiles(root: string, opts: CoveredFilesOptions): Promise<Record<string, string>> {
  const homeDir = opts.homeDir ?? opts.env.HOME ?? homedir();
  const paths = new Set<string>();
  for (const kind of ['agents', 'skills', 'commands'] as const) {
    const configPaths = kind === 'agents' ? [] : (opts.config?.[kind] ?? []);
    const sources = agentFileSources(kind, { roots: [root], env: opts.env, homeDir, configPaths }).filter((s) => s.scope === 'project' && s.root === root);
    const listing = await listAgentFiles(sources, MATCH[kind], kind === 'agents' ? { maxDepth: 1 } : {});
    for (const f of listing.files) paths.add(f.path);
  }
  for (const file of hookFiles(opts)) paths.add(join(root, file));
  const out: Record<string, string> = {};
  for (const p of [...paths].sort()) {
    try {
      const st = await stat(p);
      if (st.isFile() && st.size <= MAX_HASHED_BYTES) out[trustedFileKey(root, p)] = contentHash(await readFile(p));
    } catch {
      /* gone or unreadable: not recorded, so it is held back if it appears */
    }
  }
  return out;
}

/** coveredFiles with the folder's config file read from where it lies. */
export function coveredFilesNow(root: string, opts: Omit<CoveredFilesOptions, 'workspaceConfigText'>): Promise<Record<string, string>> {
  let workspaceConfigText: string | undefined;
  try {
    const file = workspaceConfigPath(root);
    // Only a regular file of a sane size: a FIFO would block, a huge file is refused by the loader anyway.
    const st = statSync(file);
    if (st.isFile() && st.size <= MAX_CONFIG_BYTES) workspaceConfigText = readFileSync(file, 'utf8');
  } catch {
    /* no config file: no hooks of its own */
  }
  return coveredFiles(root, { ...opts, workspaceConfigText });
}

/** The relative `file` of every hook action (the merged config's and the folder file's own). */
function hookFiles(opts: CoveredFilesOptions): string[] {
  const lists: unknown[] = [opts.config?.hooks];
  if (opts.workspaceConfigText !== undefined) {
    const parsed = parseJsonc(opts.workspaceConfigText);
    if (parsed.ok && parsed.value !== null && typeof parsed.value === 'object') lists.push((parsed.value as Record<string, unknown>).hooks);
  }
  const out: string[] = [];
  for (const hooks of lists) {
    if (hooks === null || typeof hooks !== 'object') continue;
    for (const hook of Object.values(hooks as Record<string, unknown>)) {
      const actions = (hook as { actions?: unknown } | null)?.actions;
      if (!Array.isArray(actions)) continue;
      for (const a of actions) {
        const file = (a as { file?: unknown } | null)?.file;
        if (typeof file === 'string' && file.trim() && file !== '~' && !file.startsWith('~/') && !isAbsolute(file)) out.push(file);
      }
    }
  }
  return out;
}

/** The covered files that are new or changed against a record (`recorded` undefined: every one). */
export function changedFiles(now: Record<string, string>, recorded: Record<string, string> | undefined): string[] {
  return Object.keys(now).filter((k) => recorded?.[k] !== now[k]);
}
