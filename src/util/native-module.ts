/**
 * A native addon built for another Node (better-sqlite3 installed with one Node, patchbay run with
 * another first on PATH): Node's own error is a stack trace that names two ABI numbers and
 * `npm rebuild`, without saying which Node is which or where to run it. This turns it into a
 * message a person can act on. No native code is loaded here: the CLI's entry point imports it.
 */
import { dirname, sep } from 'node:path';

/** Node's ABI (`process.versions.modules`, NODE_MODULE_VERSION) → its major version. */
const NODE_OF_ABI: Readonly<Record<number, number>> = {
  93: 16,
  108: 18,
  111: 19,
  115: 20,
  120: 21,
  127: 22,
  131: 23,
  137: 24,
  141: 25,
};

/** The mismatch, said once and without a stack (the CLI prints `message` alone and exits 1). */
export class NativeModuleMismatch extends Error {
  override readonly name = 'NativeModuleMismatch';
}

export function isNativeModuleMismatch(e: unknown): e is NativeModuleMismatch {
  return e instanceof Error && e.name === 'NativeModuleMismatch';
}

function nodeOf(abi: number): string {
  const major = NODE_OF_ABI[abi];
  return major ? `Node ${major} (NODE_MODULE_VERSION ${abi})` : `a Node with NODE_MODULE_VERSION ${abi}`;
}

/** The folder holding `node_modules/<pkg>` for a file inside it, where `npm rebuild <pkg>` is run. */
function installRoot(file: string, pkg: string): string | undefined {
  const marker = `${sep}node_modules${sep}${pkg}${sep}`;
  const at = file.lastIndexOf(marker);
  return at < 0 ? undefined : file.slice(0, at) || dirname(file);
}

export interface RunningNode {
  version: string;
  execPath: string;
  modules: string;
}

const THIS_NODE: RunningNode = { version: process.version, execPath: process.execPath, modules: process.versions.modules };

/**
 * The message for a native module of `pkg` that failed to load because it was built for another
 * Node; undefined for any other error. The two ABI numbers come from Node's own message ("compiled
 * against … NODE_MODULE_VERSION 115. This version of Node.js requires NODE_MODULE_VERSION 127").
 */
export function explainNativeLoadError(e: unknown, pkg: string, running: RunningNode = THIS_NODE): string | undefined {
  if (!(e instanceof Error)) return undefined;
  const missing = explainMissing(e, pkg, running);
  if (missing) return missing;
  const m = /NODE_MODULE_VERSION (\d+)\.[\s\S]*?requires\s+NODE_MODULE_VERSION (\d+)/.exec(e.message);
  if (!m) return undefined;
  const built = Number(m[1]);
  const file = /The module '([^']+)'/.exec(e.message)?.[1];
  const root = file ? installRoot(file, pkg) : undefined;
  const builtMajor = NODE_OF_ABI[built];
  return [
    `patchbay cannot start: its SQLite module (${pkg}) was installed with ${nodeOf(built)}, but this is Node ${running.version} (NODE_MODULE_VERSION ${running.modules}, ${running.execPath}).`,
    'Either:',
    `  - run patchbay with the Node it was installed with${builtMajor ? ` (Node ${builtMajor})` : ''}: put that Node first on PATH; or`,
    `  - rebuild the module for this Node: ${root ? `cd ${/\s/.test(root) ? JSON.stringify(root) : root} && ` : ''}npm rebuild ${pkg}` +
      ' (or reinstall patchbay with this Node: npm install -g patchbay-ai).',
  ].join('\n');
}

/**
 * No addon at all: the package is there but its native part was never built (installed with
 * `--ignore-scripts`, or its install script failed), so `bindings` lists the paths it tried; or
 * the package itself is gone.
 */
function explainMissing(e: Error, pkg: string, running: RunningNode): string | undefined {
  if (e.message.startsWith('Could not locate the bindings file')) {
    const tried = /\u2192\s*(\S+)/.exec(e.message)?.[1];
    const root = tried ? installRoot(tried, pkg) : undefined;
    return [
      `patchbay cannot start: its SQLite module (${pkg}) has no native addon for this Node (${running.version}, ${running.execPath}): it was installed without running its install script, or that script failed.`,
      `Build it: ${root ? `cd ${/\s/.test(root) ? JSON.stringify(root) : root} && ` : ''}npm rebuild ${pkg} (it fetches a prebuilt binary, or compiles one, which needs a C++ toolchain); or reinstall patchbay: npm install -g patchbay-ai.`,
    ].join('\n');
  }
  const code = (e as { code?: unknown }).code;
  if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && new RegExp(`['"]${pkg}['"]`).test(e.message)) {
    return `patchbay cannot start: its SQLite module (${pkg}) is not installed. Reinstall patchbay: npm install -g patchbay-ai (or npm install in a checkout).`;
  }
  return undefined;
}
