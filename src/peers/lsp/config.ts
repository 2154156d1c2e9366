/**
 * `languageServers` config: each entry validated on its own (a bad one is reported, never
 * thrown), merged over the built-in servers. A built-in is offered only when its command is
 * found, so a machine without gopls never sees a failed "gopls".
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { z } from 'zod';
import { hardenForUntrusted } from './untrusted.js';

/** A user entry; every field optional so `{ "disabled": true }` or new `args` can extend a built-in. */
export const EntrySchema = z.strictObject({
  command: z.string().min(1).optional(),
  args: z.array(z.string()).optional(),
  extensions: z.array(z.string().min(1)).optional(),
  languageIds: z.array(z.string().min(1)).optional(),
  rootMarkers: z.array(z.string().min(1)).optional(),
  initializationOptions: z.unknown().optional(),
  env: z.record(z.string(), z.string()).optional(),
  disabled: z.boolean().optional(),
  diagnosticsTimeoutSeconds: z.number().positive().max(600).optional(),
  requestTimeoutSeconds: z.number().positive().max(600).optional(),
});

/**
 * A server patchbay can run: an entry (merged over a built-in) that has its command. `extensions`
 * are file extensions without the dot (`ts`) or LSP language ids; `rootMarkers` are files that
 * mark a project root (`package.json`, `go.mod`…), default the workspace folder;
 * `diagnosticsTimeoutSeconds` is the most a write waits for diagnostics while the server loads.
 */
export type LanguageServerConfig = Omit<z.infer<typeof EntrySchema>, 'command'> & { command: string };

export const BUILTIN_SERVERS: Readonly<Record<string, LanguageServerConfig>> = {
  'typescript-language-server': {
    command: 'typescript-language-server',
    args: ['--stdio'],
    extensions: ['ts', 'tsx', 'js', 'jsx', 'mjs', 'cjs', 'mts', 'cts'],
    rootMarkers: ['tsconfig.json', 'jsconfig.json', 'package.json'],
  },
  pyright: {
    command: 'pyright-langserver',
    args: ['--stdio'],
    extensions: ['py', 'pyi'],
    rootMarkers: ['pyproject.toml', 'pyrightconfig.json', 'setup.py', 'setup.cfg', 'requirements.txt'],
  },
  gopls: { command: 'gopls', args: [], extensions: ['go'], rootMarkers: ['go.work', 'go.mod'] },
  'rust-analyzer': { command: 'rust-analyzer', args: [], extensions: ['rs'], rootMarkers: ['Cargo.toml'] },
  clangd: {
    command: 'clangd',
    args: [],
    extensions: ['c', 'h', 'cc', 'cpp', 'cxx', 'hpp', 'hh', 'hxx', 'm', 'mm'],
    rootMarkers: ['compile_commands.json', 'compile_flags.txt', '.clangd', 'CMakeLists.txt'],
  },
};

/** What each built-in server needs installed, said when it cannot run (and in docs/language-servers.md). */
export const BUILTIN_NEEDS: Readonly<Record<string, string>> = {
  // Version 5 on purpose: TypeScript 7 (the native port, now `typescript@latest`) ships no
  // tsserver, and typescript-language-server cannot run without one.
  'typescript-language-server':
    '`typescript@5` installed in the project (npm i -D typescript@5) or globally (npm i -g typescript@5); TypeScript 7 has no tsserver, which typescript-language-server runs',
  pyright: 'pyright-langserver on PATH (npm i -g pyright, or pip install pyright)',
  gopls: 'gopls on PATH (go install golang.org/x/tools/gopls@latest) and a Go toolchain',
  'rust-analyzer': 'rust-analyzer on PATH (rustup component add rust-analyzer) and a Cargo project',
  clangd: 'clangd on PATH and a compile_commands.json (or compile_flags.txt) for the project',
};

export interface ResolvedServers {
  /** Usable servers by name (disabled ones excluded). */
  servers: Map<string, LanguageServerConfig>;
  disabled: Map<string, LanguageServerConfig>;
  /** Entries that could not be used, with why. */
  problems: Array<{ name: string; command: string; error: string }>;
  /** Built-ins found only in a workspace the user has not trusted, so not offered: name → why. */
  untrusted: Map<string, string>;
}

export interface ResolveOptions {
  /**
   * Whether a workspace folder is trusted (src/config/trust.ts isTrustedFolder): only then is a
   * program it ships (`<root>/node_modules/.bin/…`) run. Absent: no folder is.
   */
  trustedFolder?: (root: string) => boolean;
}

/** Why a built-in found only in an untrusted workspace is not offered (doctor, log). */
export const UNTRUSTED_LOCAL_NOTE = "the workspace's node_modules/.bin copy is not used until you trust this folder (patchbay trust)";

export function resolveServers(raw: Record<string, unknown>, roots: string[], env: NodeJS.ProcessEnv, opts: ResolveOptions = {}): ResolvedServers {
  const out: ResolvedServers = { servers: new Map(), disabled: new Map(), problems: [], untrusted: new Map() };
  const find = (name: string, command: string): string | undefined => {
    const found = findBuiltinCommand(name, command, roots, env, opts.trustedFolder ?? (() => false));
    if (found.untrustedLocal) out.untrusted.set(name, UNTRUSTED_LOCAL_NOTE);
    return found.command;
  };
  const untrustedRoots = roots.filter((r) => !(opts.trustedFolder ?? (() => false))(r));
  const user = new Map<string, z.infer<typeof EntrySchema>>();
  for (const [name, value] of Object.entries(raw ?? {})) {
    const parsed = EntrySchema.safeParse(value);
    if (!parsed.success) {
      out.problems.push({ name, command: commandOf(value), error: `invalid languageServers.${name}: ${z.prettifyError(parsed.error)}` });
      continue;
    }
    user.set(name, parsed.data);
  }
  for (const [name, entry] of user) {
    const base = BUILTIN_SERVERS[name];
    const merged = { ...base, ...stripUndefined(entry) } as Partial<LanguageServerConfig>;
    if (!merged.command) {
      out.problems.push({ name, command: '', error: `languageServers.${name}: "command" is required` });
      continue;
    }
    if (base && !entry.command) merged.command = find(name, base.command) ?? base.command;
    if (!merged.extensions?.length && !merged.languageIds?.length) {
      out.problems.push({ name, command: merged.command, error: `languageServers.${name}: give "extensions" or "languageIds"` });
      continue;
    }
    let config = { args: [], ...merged } as LanguageServerConfig;
    // An entry that only tunes a built-in still runs the built-in's program.
    if (base && !entry.command && untrustedRoots.length && !config.disabled) {
      const hardened = hardenForUntrusted(name, config, whichPath(config.command, env), untrustedRoots);
      if ('refused' in hardened) {
        out.untrusted.set(name, hardened.refused);
        continue;
      }
      config = hardened.config;
    }
    (config.disabled ? out.disabled : out.servers).set(name, config);
  }
  // Built-ins after user entries: a user's server for the same files wins.
  for (const [name, builtin] of Object.entries(BUILTIN_SERVERS)) {
    if (user.has(name)) continue;
    const command = find(name, builtin.command);
    if (!command) continue;
    const config = { ...builtin, command };
    if (!untrustedRoots.length) {
      out.servers.set(name, config);
      continue;
    }
    const hardened = hardenForUntrusted(name, config, whichPath(command, env), untrustedRoots);
    if ('refused' in hardened) out.untrusted.set(name, hardened.refused);
    else out.servers.set(name, hardened.config);
  }
  return out;
}

function commandOf(v: unknown): string {
  const c = v && typeof v === 'object' ? (v as { command?: unknown }).command : undefined;
  return typeof c === 'string' ? c : '';
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * The command as given when it is on PATH; for typescript-language-server also a workspace-local
 * install, but only in a trusted folder: a cloned repository could ship any program there.
 * `untrustedLocal`: there was one, in a folder not trusted.
 */
function findBuiltinCommand(name: string, command: string, roots: string[], env: NodeJS.ProcessEnv, trusted: (root: string) => boolean): { command?: string; untrustedLocal?: boolean } {
  if (onPath(command, env)) return { command };
  let untrustedLocal = false;
  if (name === 'typescript-language-server') {
    for (const root of roots) {
      const local = join(root, 'node_modules', '.bin', command);
      if (!isExecutable(local)) continue;
      if (trusted(root)) return { command: local };
      untrustedLocal = true;
    }
  }
  return { untrustedLocal };
}

export function onPath(command: string, env: NodeJS.ProcessEnv): boolean {
  return whichPath(command, env) !== undefined;
}

/** Where `command` runs from: itself when absolute, else the first executable match on PATH. */
export function whichPath(command: string, env: NodeJS.ProcessEnv): string | undefined {
  if (isAbsolute(command)) return isExecutable(command) ? command : undefined;
  const exts = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';') : [''];
  for (const dir of (env.PATH ?? env.Path ?? '').split(delimiter)) {
    if (!dir) continue;
    for (const ext of exts) if (isExecutable(join(dir, command + ext))) return join(dir, command + ext);
  }
  return undefined;
}

function isExecutable(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
