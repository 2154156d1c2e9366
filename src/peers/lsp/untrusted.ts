/**
 * Built-in language servers in a folder the user has not trusted. Some would run the folder's
 * own code just by starting: typescript-language-server loads the `typescript` it finds in the
 * folder's (or a parent's) `node_modules`, and rust-analyzer runs build scripts, proc macros and
 * the wrappers a `.cargo/config.toml` names. The first is pointed at the TypeScript that ships
 * beside it; the second waits for trust. What the user configured themselves is left alone.
 */
import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { isWithin } from '../../util/paths.js';
import type { LanguageServerConfig } from './types.js';

export type Hardened = { config: LanguageServerConfig } | { refused: string };

export const RUST_ANALYZER_NOTE = "runs the project's build scripts, proc macros and .cargo/config wrappers: not started until you trust this folder (patchbay trust)";
export const WORKSPACE_TYPESCRIPT_NOTE = "would load the workspace's own node_modules/typescript: not started until you trust this folder (patchbay trust)";

/** `config` made safe to start for `roots`, or why it cannot be. `commandPath`: the resolved executable. */
export function hardenForUntrusted(name: string, config: LanguageServerConfig, commandPath: string | undefined, roots: string[]): Hardened {
  if (name === 'rust-analyzer') return { refused: RUST_ANALYZER_NOTE };
  if (name !== 'typescript-language-server') return { config };
  const opts = (config.initializationOptions ?? {}) as { tsserver?: { path?: unknown } };
  if (opts.tsserver?.path !== undefined) return { config };
  const own = commandPath ? typescriptBeside(commandPath) : undefined;
  if (own && !roots.some((r) => isWithin(realOr(r), own))) {
    return { config: { ...config, initializationOptions: { ...opts, tsserver: { ...opts.tsserver, path: own } } } };
  }
  return roots.some(hasTypescriptUpward) ? { refused: WORKSPACE_TYPESCRIPT_NOTE } : { config };
}

/** `tsserver.js` of the `typescript` package the server's own install resolves, if any. */
function typescriptBeside(commandPath: string): string | undefined {
  try {
    const entry = realpathSync(commandPath);
    const file = join(dirname(createRequire(entry).resolve('typescript/package.json')), 'lib', 'tsserver.js');
    return existsSync(file) ? realpathSync(file) : undefined;
  } catch {
    return undefined;
  }
}

/** typescript-language-server looks for `node_modules/typescript` from the root up to `/`. */
function hasTypescriptUpward(root: string): boolean {
  for (let dir = root; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'node_modules', 'typescript', 'package.json'))) return true;
    if (dirname(dir) === dir) return false;
  }
}

function realOr(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}
