/**
 * Where the agent's Markdown files live (rules, skills, custom commands, agents), as ECA lays them
 * out, with patchbay's own folder first:
 *
 * - project: `<root>/.patchbay/<kind>` and `<root>/.eca/<kind>` in every workspace folder
 *   (skills also `<root>/.agents/skills`, the agentskills convention);
 * - user: `~/.config/patchbay/<kind>` and `~/.config/eca/<kind>` (`$XDG_CONFIG_HOME` honoured;
 *   skills also `~/.agents/skills`);
 * - config: the `path` of each entry of the config key (`rules: [{path}]`…): a file or a folder,
 *   relative paths from each workspace folder, `~/` from the home folder. An absolute path inside a
 *   workspace folder counts as a project file.
 *
 * Listing never throws: a folder that is missing is skipped, one that cannot be read is reported.
 */
import { readdir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { userConfigDir } from '../util/locations.js';
import { isWithin } from '../util/paths.js';
import { errorMessage } from '../util/log.js';

export type AgentFileKind = 'rules' | 'skills' | 'commands' | 'agents';

export type AgentFileScope = 'project' | 'user';

export interface AgentFileSource {
  /** A folder to list, or one file (a config entry naming a file). */
  path: string;
  scope: AgentFileScope;
  /** For project sources: the workspace folder it belongs to. */
  root?: string;
  /** Where it came from, for messages: `.patchbay/rules`, `config "rules"`… */
  origin: string;
}

export interface AgentFileLocations {
  roots: string[];
  env: NodeJS.ProcessEnv;
  homeDir?: string;
  /** The config key's entries (`config.rules` …): `{ path }` objects. */
  configPaths?: { path: string }[];
}

/** Every place files of `kind` are read from, most general first (user, then project, then config). */
export function agentFileSources(kind: AgentFileKind, loc: AgentFileLocations): AgentFileSource[] {
  const home = loc.homeDir ?? homedir();
  const out: AgentFileSource[] = [];
  const user = [userConfigDir(loc.env, home), userConfigDir(loc.env, home, 'eca')].map((d) => join(d, kind));
  if (kind === 'skills') user.push(join(home, '.agents', 'skills'));
  for (const path of user) out.push({ path, scope: 'user', origin: path });
  for (const root of loc.roots) {
    const dirs = [join('.patchbay', kind), join('.eca', kind)];
    if (kind === 'skills') dirs.push(join('.agents', 'skills'));
    for (const d of dirs) out.push({ path: join(root, d), scope: 'project', root, origin: d });
  }
  for (const entry of loc.configPaths ?? []) {
    const p = entry.path.trim();
    if (!p) continue;
    const origin = `config "${kind}": ${p}`;
    if (p === '~' || p.startsWith('~/')) {
      out.push(scoped(join(home, p.slice(1)), loc.roots, origin));
    } else if (isAbsolute(p)) {
      out.push(scoped(resolve(p), loc.roots, origin));
    } else {
      for (const root of loc.roots) out.push({ path: resolve(root, p), scope: 'project', root, origin });
    }
  }
  return out;
}

function scoped(path: string, roots: string[], origin: string): AgentFileSource {
  const root = roots.find((r) => isWithin(r, path));
  return root ? { path, scope: 'project', root, origin } : { path, scope: 'user', origin };
}

export interface ListedFile {
  path: string;
  source: AgentFileSource;
}

export interface Listing {
  files: ListedFile[];
  /** Folders or files that exist but could not be read, with why. */
  problems: { path: string; message: string }[];
}

/**
 * The files under each source whose name passes `match` (e.g. `.md`, or `SKILL.md`), sorted by
 * path within a source, sources in order; a folder is walked to `maxDepth` levels, dot-folders and
 * `node_modules` skipped, at most `limit` files in all. A source that is a file is taken as is.
 */
export async function listAgentFiles(sources: AgentFileSource[], match: (name: string) => boolean, opts: { maxDepth?: number; limit?: number } = {}): Promise<Listing> {
  const maxDepth = opts.maxDepth ?? 8;
  const limit = opts.limit ?? 2000;
  const files: ListedFile[] = [];
  const problems: Listing['problems'] = [];
  const seen = new Set<string>();
  for (const source of sources) {
    let st;
    try {
      st = await stat(source.path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' && (e as NodeJS.ErrnoException).code !== 'ENOTDIR') problems.push({ path: source.path, message: errorMessage(e) });
      else if (source.origin.startsWith('config ')) problems.push({ path: source.path, message: 'not found' });
      continue;
    }
    if (st.isFile()) {
      if (!seen.has(source.path)) files.push({ path: source.path, source });
      seen.add(source.path);
      continue;
    }
    const found: string[] = [];
    const walk = async (dir: string, depth: number): Promise<void> => {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (e) {
        problems.push({ path: dir, message: errorMessage(e) });
        return;
      }
      for (const ent of entries) {
        if (files.length + found.length >= limit) return;
        const p = join(dir, ent.name);
        let isDir = ent.isDirectory();
        let isFile = ent.isFile();
        if (ent.isSymbolicLink()) {
          try {
            const t = await stat(p);
            isDir = t.isDirectory();
            isFile = t.isFile();
          } catch {
            continue;
          }
        }
        if (isDir) {
          if (depth < maxDepth && !ent.name.startsWith('.') && ent.name !== 'node_modules') await walk(p, depth + 1);
        } else if (isFile && match(ent.name)) found.push(p);
      }
    };
    await walk(source.path, 1);
    for (const p of found.sort()) {
      if (seen.has(p)) continue;
      seen.add(p);
      files.push({ path: p, source });
    }
  }
  return { files, problems };
}
