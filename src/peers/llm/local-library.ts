/**
 * Whether node-llama-cpp (the built-in local model's runtime, an optional dependency) is
 * installed where patchbay can import it, and if not, the command that adds it.
 *
 * patchbay imports it as an ES module from its own files (bin/patchbay lends the bundle its
 * `import`), so it is found only in a `node_modules` folder on the way up from patchbay's own
 * folder: patchbay's own node_modules, or the one patchbay itself sits in (a global prefix's
 * lib/node_modules, a project's node_modules). ES module resolution ignores NODE_PATH, so that
 * is no way in. Hence the advice: install it beside patchbay, into the same global prefix or the
 * same project, or reinstall patchbay-ai with its optional dependencies.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package patchbay is published as (npm's `patchbay` is another project). */
export const PACKAGE_NAME = 'patchbay-ai';
/** The node-llama-cpp version package.json pins in optionalDependencies (a unit test keeps them equal). */
export const NODE_LLAMA_CPP_VERSION = '3.21.1';

const LIBRARY = 'node-llama-cpp';

/** The folder of patchbay's package.json, found upwards from this module (src/, dist/ or the bundle). */
export function packageRoot(from: string = fileURLToPath(import.meta.url)): string | undefined {
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        const name = (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name;
        if (name === PACKAGE_NAME) return dir;
      } catch {
        // An unreadable package.json on the way up is not ours: keep looking.
      }
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** The node-llama-cpp folder an import from `root` would load, as Node's resolver walks up (undefined: none). */
export function findLibrary(root: string): string | undefined {
  for (let dir = root; ; dir = dirname(dir)) {
    if (basename(dir) !== 'node_modules') {
      const candidate = join(dir, 'node_modules', LIBRARY);
      if (existsSync(join(candidate, 'package.json'))) return candidate;
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** How patchbay at `root` was installed, which decides where node-llama-cpp must go. */
export type Install = { kind: 'global'; prefix: string } | { kind: 'project'; dir: string } | { kind: 'checkout'; dir: string };

export function installKind(root: string, platform: NodeJS.Platform = process.platform): Install {
  const modules = dirname(root);
  if (basename(modules) !== 'node_modules') return { kind: 'checkout', dir: root };
  const above = dirname(modules);
  // npm's global layout: <prefix>/lib/node_modules/<pkg> with the command in <prefix>/bin on
  // Unix, <prefix>/node_modules/<pkg> with <prefix>/patchbay.cmd on Windows.
  if (platform === 'win32') {
    if (existsSync(join(above, 'patchbay.cmd'))) return { kind: 'global', prefix: above };
  } else if (basename(above) === 'lib' && existsSync(join(dirname(above), 'bin', 'patchbay'))) {
    return { kind: 'global', prefix: dirname(above) };
  }
  return { kind: 'project', dir: above };
}

const quote = (path: string) => (/^[\w@%+=:,./-]+$/.test(path) ? path : `"${path}"`);

/** The command that puts node-llama-cpp where patchbay at `root` imports it from. */
export function installAdvice(root: string | undefined, platform: NodeJS.Platform = process.platform): string {
  const spec = `${LIBRARY}@${NODE_LLAMA_CPP_VERSION}`;
  if (!root) return `npm install ${spec} beside patchbay-ai`;
  const where = installKind(root, platform);
  if (where.kind === 'global') return `npm install -g --prefix ${quote(where.prefix)} ${spec} (or reinstall ${PACKAGE_NAME} without --omit=optional)`;
  if (where.kind === 'project') return `cd ${quote(where.dir)} && npm install ${spec} (or reinstall ${PACKAGE_NAME} there without --omit=optional)`;
  return `cd ${quote(where.dir)} && npm install --include=optional`;
}

/** Undefined when node-llama-cpp is importable from `from` (a file of patchbay's); otherwise what to tell the user, with the command. */
export function missingLibraryMessage(from: string = fileURLToPath(import.meta.url)): string | undefined {
  const root = packageRoot(from);
  if (findLibrary(root ?? dirname(from))) return undefined;
  return `The built-in local model needs ${LIBRARY}, an optional dependency that is not installed. Add it: ${installAdvice(root)}`;
}
