/**
 * Protected paths: files whose content decides what runs or what is approved, for patchbay
 * and for the other tools a developer uses in the same folder. A model that could write them
 * without asking could escalate its own approvals (`byDefault: "allow"` in
 * `.patchbay/config.json`), start programs on the next launch (`mcpServers`, `.vscode/tasks.json`,
 * `.envrc`) or on the next commit (`.git/hooks`, `core.hooksPath` in `.git/config`).
 *
 * A path is protected when, inside a workspace folder, one of its segments (at any depth, so a
 * nested repository's `.git` counts too; compared without case, as on case-insensitive file
 * systems) is one of WORKSPACE_NAMES, or when it lies anywhere inside patchbay's user config
 * folder (but its `memory/` folder: durable memory's notes) or its data folder (`$PATCHBAY_HOME`,
 * holding trust.json and tokens). Both the path as written and its real path (every symlink
 * followed, a dangling one too) are checked, so a link to `.git/hooks` is no way around it.
 */
import { realpath } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import picomatch from 'picomatch';
import { isWithin, realpathDeepest } from '../../util/paths.js';
import { patchbayHome, userConfigPath } from '../../config/load.js';

/** Segment name (lower case) → why writing below it matters. */
export const WORKSPACE_NAMES: ReadonlyMap<string, string> = new Map([
  ['.patchbay', "patchbay's workspace config"],
  ['.eca', "ECA's workspace config"],
  ['.git', 'git metadata: hooks and config run code'],
  ['.vscode', "VS Code's settings and tasks"],
  ['.idea', "JetBrains' project settings"],
  ['.zed', "Zed's settings and tasks"],
  ['.claude', "Claude Code's settings and hooks"],
  ['.cursor', "Cursor's settings and rules"],
  ['.husky', 'git hooks (husky)'],
  ['.githooks', 'git hooks'],
  ['.envrc', 'direnv runs it when you enter the folder'],
  ['.mcp.json', 'MCP servers other agents start'],
  ['.gitmodules', 'git submodules (fetched and checked out by git)'],
]);

/**
 * Why `name` (one path segment) is protected inside a workspace, if it is. Trailing dots and
 * spaces are dropped (Windows does when it creates the file); a glob (`.gi?`, `.p*y`) is
 * protected when it could name a protected segment, as the shell would expand it.
 */
export function protectedName(name: string): string | undefined {
  const plain = name.toLowerCase().replace(/(?<=.)[. ]+$/, '');
  const why = WORKSPACE_NAMES.get(plain);
  if (why || !/[*?[{]/.test(name)) return why;
  for (const [known, reason] of WORKSPACE_NAMES) if (picomatch.isMatch(known, name, { nocase: true })) return reason;
  return undefined;
}

/** patchbay's own folders outside any workspace, with what they hold. */
function patchbayFolders(env: NodeJS.ProcessEnv): Array<{ dir: string; why: string }> {
  return [
    { dir: dirname(userConfigPath(env)), why: "patchbay's user config" },
    { dir: patchbayHome(env), why: "patchbay's data (trust, tokens)" },
  ];
}

/**
 * Why writing `absPath` needs the user's approval every time, or undefined when it is not
 * protected. `roots` are the workspace folders.
 */
export async function protectedPath(absPath: string, roots: string[], env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  const lexical = resolve(absPath);
  const candidates = [lexical];
  const real = await realpathDeepest(lexical).catch(() => undefined);
  if (real && real !== lexical) candidates.push(real);
  const folders = await withReal(patchbayFolders(env).map((f) => f.dir));
  const whys = patchbayFolders(env).map((f) => f.why);
  const rootDirs = await withReal(roots);
  // Durable memory's folder (core/memory/) holds notes, nothing that runs or approves: it is not
  // patchbay's config. Each candidate is judged alone, so a link in it to config.json still counts.
  const [memory] = await withReal([join(dirname(userConfigPath(env)), 'memory')]);
  for (const p of candidates) {
    for (let k = 0; k < folders.length; k++) {
      if (k === 0 && memory!.some((m) => isWithin(m, p))) continue;
      if (folders[k]!.some((d) => isWithin(d, p))) return whys[k];
    }
    for (const variants of rootDirs) {
      for (const root of variants) {
        if (!isWithin(root, p)) continue;
        for (const seg of relative(root, p).split(/[\\/]/)) {
          const why = protectedName(seg);
          if (why) return `${seg} (${why})`;
        }
      }
    }
  }
  return undefined;
}

/** Each path with its real path (when it exists and differs). */
async function withReal(paths: string[]): Promise<string[][]> {
  return Promise.all(
    paths.map(async (p) => {
      const abs = resolve(p);
      const real = await realpath(abs).catch(() => abs);
      return real === abs ? [abs] : [abs, real];
    }),
  );
}
