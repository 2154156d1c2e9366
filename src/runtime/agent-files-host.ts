/** What the file-based agent features (skills, custom commands) use of the workspace. */
import type { AgentFileKind, AgentFileSource } from '../config/agent-files.js';
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { fileTrustWhy, type FileTrust } from '../config/trust.js';
import { isWithin } from '../util/paths.js';
import { agentFileSources } from '../config/agent-files.js';
import type { Config } from '../config/schema.js';
import { displayPath, type MdFileCache, type ScannedFile, type ScanRules } from './md-file-cache.js';
import type { CommandRegistry } from '../core/chat/commands.js';
import type { PromptSources } from '../core/turn/prompt-sections.js';
import type { RuntimeBoard } from '../core/agent-files/runtime-board.js';
import type { ToolRegistry } from '../core/tool-calls/tool-registry.js';

/** Skill and command files are not read past 256 KiB (md-file-cache.ts); nor hashed. */
const MAX_HASHED_BYTES = 256 * 1024;

export interface AgentFilesHost {
  /** Read at each use: workspace folders change at run time. */
  roots(): string[];
  /** Read at each use: a config reload replaces it (the `skills` and `commands` keys). */
  config(): Config;
  /**
   * How a file of this workspace folder stands with the user's trust (config/trust.ts `fileTrust`,
   * `bytes` its content now): trusted, or the folder untrusted, or the file new or changed since.
   * Asked only for files linking out of it.
   */
  fileTrust(root: string, path: string, bytes: Buffer): FileTrust;
  /** `pureConfig: true` from the editor: the user's own folders are not read (ECA skips its global ones). */
  pureConfig(): boolean;
  env: NodeJS.ProcessEnv;
  homeDir: string;
  board: RuntimeBoard;
  tools: ToolRegistry;
  commands: CommandRegistry;
  prompt: PromptSources;
}

/** Where files of `kind` are read now: the folders of now, the config key of now. */
export function sourcesOf(host: AgentFilesHost, kind: Extract<AgentFileKind, 'skills' | 'commands'>): AgentFileSource[] {
  const sources = agentFileSources(kind, { roots: host.roots(), env: host.env, homeDir: host.homeDir, configPaths: host.config()[kind] ?? [] });
  return host.pureConfig() ? sources.filter((s) => s.scope === 'project' || s.origin.startsWith('config ')) : sources;
}

/**
 * The project files that are symlinks to somewhere outside their workspace folder, in a folder the
 * user has not trusted, or new or changed since they trusted it (→ why): a repository must not have
 * your other files (keys, dotfiles) read into a prompt by linking to them. In a trusted folder such
 * links, as trusted, are the user's own (a shared skills checkout linked in) and load.
 */
export function linkedOutOfUntrusted(host: AgentFilesHost, files: { path: string; real: string; source: AgentFileSource }[]): Map<string, Exclude<FileTrust, 'trusted'>> {
  const out = new Map<string, Exclude<FileTrust, 'trusted'>>();
  const realRoots = new Map<string, string>();
  for (const f of files) {
    const root = f.source.root;
    if (f.source.scope !== 'project' || root === undefined) continue;
    let real = realRoots.get(root);
    if (real === undefined) {
      try {
        real = realpathSync(root);
      } catch {
        real = root;
      }
      realRoots.set(root, real);
    }
    if (isWithin(real, f.real)) continue;
    let state: FileTrust;
    try {
      // Too big to be read as a prompt anyway (md-file-cache.ts): not read each time to hash it.
      state = statSync(f.path).size > MAX_HASHED_BYTES ? 'changed' : host.fileTrust(root, f.path, readFileSync(f.path));
    } catch {
      state = 'changed';
    }
    if (state !== 'trusted') out.set(f.path, state);
  }
  return out;
}

export interface FileScan<T> {
  /** The files to use (parsed or not), without those linking out of an untrusted folder. */
  files: ScannedFile<T>[];
  /** What to tell the user: folders that could not be read, files skipped and why. */
  problems: string[];
  /** Changes whenever the folders, the files, their content or what is skipped for trust does. */
  key: string;
}

/** Lists and parses the files of `kind` (through `cache`), says what was skipped, in `what`'s words. */
export function scanFiles<T extends { ok: true } | { ok: false; error: string }>(
  host: AgentFilesHost,
  cache: MdFileCache<T>,
  kind: Extract<AgentFileKind, 'skills' | 'commands'>,
  rules: ScanRules,
  what: { folder: string; file: string },
): FileScan<T> {
  const show = (p: string) => displayPath(p, host.roots(), host.homeDir);
  const sources = sourcesOf(host, kind);
  const scan = cache.scan(sources, rules);
  const linked = linkedOutOfUntrusted(host, scan.files);
  const problems = scan.problems.map((p) => `${what.folder}: ${show(p.path)}: ${p.message}`);
  const files = scan.files.filter((f) => !linked.has(f.path));
  for (const f of scan.files) {
    const state = linked.get(f.path);
    if (state === 'untrusted') problems.push(`${what.file} skipped: ${show(f.path)}: it links outside its workspace folder, which you have not trusted (/trust loads it)`);
    else if (state !== undefined) problems.push(`${what.file} skipped: ${show(f.path)}: it links outside its workspace folder and is ${fileTrustWhy(state, f.source.root ?? '')} (/trust loads it)`);
    else if (!f.value.ok) problems.push(`${what.file} skipped: ${show(f.path)}: ${f.value.error}`);
  }
  return { files, problems, key: `${host.roots().join('\0')}\n${sources.map((s) => s.path).join('\0')}\n${scan.key}\n${[...linked].map(([p, s]) => `${p}=${s}`).join('\0')}` };
}

/**
 * The order in which same-named files compete, the first winning: the config key's entries, then
 * the user's folders, then the project's. ECA's `all` lists skills and commands in that order
 * (skills.clj, commands.clj `custom-commands`) and runs the first of a name; and a repository,
 * trusted or not, must not replace a skill or command the user wrote for themselves.
 */
export function byPrecedence<F extends { source: AgentFileSource }>(files: readonly F[]): F[] {
  const rank = (f: F) => (f.source.origin.startsWith('config ') ? 0 : f.source.scope === 'user' ? 1 : 2);
  // Stable: within a rank, the order found (`.patchbay` before `.eca` before `.agents`).
  return [...files].sort((a, b) => rank(a) - rank(b));
}
