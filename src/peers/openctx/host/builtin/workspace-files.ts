/**
 * `patchbay files`: @-mention workspace files (fuzzy file search) and fetch their content.
 * Fed with functions so it knows nothing of patchbay's server or sessions.
 */
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { invalidParams, type Item, type Mention, type MetaResult, type OpenCtxProviderImpl } from '../protocol.js';
import { isContained, OutsideWorkspaceError, readContainedText } from '../../../../util/contained.js';
import { DEFAULT_MENTION_LIMIT, type Awaitable } from './util.js';

export interface WorkspaceFilesDeps {
  /** Fuzzy file search; paths are absolute or relative to the first root. */
  query(q: string): Awaitable<Array<{ type: string; path: string }>>;
  /**
   * Reads a file (absolute path) that must really lie inside the roots; rejects with
   * OutsideWorkspaceError otherwise. Default: the tools' containment check (core/tools/contained.ts).
   */
  read?(path: string): Promise<string>;
  /** Whether a listed file really lies inside the roots, symlinks followed. Default: the same check. */
  inside?(path: string): Promise<boolean>;
  /** The workspace roots now (absolute; they change at run time); files are only listed and served when they really lie inside them. */
  roots: () => string[];
  /** Max mentions per answer; default 50. */
  limit?: number;
}

export function workspaceFiles(deps: WorkspaceFilesDeps): OpenCtxProviderImpl {
  const roots = (): string[] => deps.roots().map((r) => resolve(r));
  const limit = deps.limit ?? DEFAULT_MENTION_LIMIT;
  // A path inside a root may still lead out through a symlink: what is served is checked on the
  // file actually opened, as the file tools do (issue 14.4).
  const read = deps.read ?? ((abs: string) => readContainedText(abs, { roots: roots() }));
  const inside = deps.inside ?? ((abs: string) => isContained(abs, { roots: roots() }));

  const absolute = (p: string): string => (isAbsolute(p) ? resolve(p) : resolve(roots()[0] ?? process.cwd(), p));
  const rootOf = (abs: string): string | undefined => roots().find((r) => abs === r || abs.startsWith(r.endsWith(sep) ? r : r + sep));
  const title = (abs: string): string => {
    const root = rootOf(abs);
    const rel = root ? relative(root, abs) : abs;
    return rel.split(sep).join('/');
  };

  return {
    meta(): MetaResult {
      return { name: 'patchbay files', mentions: {} };
    },

    async mentions(params): Promise<Mention[]> {
      const found = await deps.query(params.query ?? '');
      const out: Mention[] = [];
      for (const f of found) {
        if (f.type === 'directory' || f.type === 'dir') continue;
        const abs = absolute(f.path);
        if (!rootOf(abs) || !(await inside(abs))) continue;
        out.push({ title: title(abs), uri: pathToFileURL(abs).href });
        if (out.length >= limit) break;
      }
      return out;
    },

    async items(params): Promise<Item[]> {
      const mention = params.mention;
      if (!mention) return [];
      let url: URL;
      try {
        url = new URL(mention.uri);
      } catch {
        throw invalidParams(`mention.uri: not a URL: ${JSON.stringify(mention.uri)}`);
      }
      if (url.protocol !== 'file:') throw invalidParams(`mention.uri: expected a file:// URL, got ${JSON.stringify(mention.uri)}`);
      const abs = resolve(fileURLToPath(url));
      if (!rootOf(abs)) throw invalidParams(`mention.uri: ${JSON.stringify(mention.uri)} is outside the workspace roots`);
      let content: string;
      try {
        content = await read(abs);
      } catch (e) {
        if (e instanceof OutsideWorkspaceError) {
          throw invalidParams(`mention.uri: ${JSON.stringify(mention.uri)} resolves outside the workspace roots (through a symlink); it is not served`);
        }
        throw e;
      }
      return [{ title: title(abs), url: pathToFileURL(abs).href, ai: { content } }];
    },
  };
}
