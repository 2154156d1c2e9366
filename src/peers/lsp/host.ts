/**
 * The LSP peer for one workspace: picks the language server for a file, starts one process per
 * project root lazily, keeps documents in sync, collects diagnostics, and serves the LSP tools.
 */
import type { XCache } from './sourcegraph.js';
import { readdir, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Tool } from '../../shapes/tool.js';
import { errorMessage, logger, type Logger } from '../../util/log.js';
import { killTreesNow } from '../../util/process-tree.js';
import { ServerCancelled } from '../../rpc/errors.js';
import { BUILTIN_NEEDS, BUILTIN_SERVERS, resolveServers } from './config.js';
import { extensionOf, languageIdOf } from './documents.js';
import { formatDiagnostic } from './format.js';
import { LanguageServerProcess, type RestartPolicy } from './server.js';
import { lspTools } from './tools.js';
import type { FileDiagnostics, LanguageServerConfig, LspHost, LspServerInfo } from './types.js';
import { DiagnosticsStore, type Diagnostic, type Published, type WaitEnd, type WaitLimits } from './diagnostics.js';
import { documentDiagnosticReportSchema } from '../../protocol/lsp/index.js';

export interface LspHostOptions {
  /** `languageServers` from the config, unvalidated: each entry is checked on its own. */
  servers: Record<string, unknown>;
  roots: string[];
  env: NodeJS.ProcessEnv;
  log?: Logger;
  /** Defaults: 1 s, doubling, at most 5 restarts. */
  restart?: Partial<RestartPolicy>;
  /** Once its server is ready, how long a wait for diagnostics goes on without an answer; default 3000. */
  diagnosticsWaitMs?: number;
  /** The most a wait for diagnostics takes while the server is still loading; default 30 000 (per server: `diagnosticsTimeoutSeconds`). */
  diagnosticsMaxWaitMs?: number;
  /** Every request to a server but `initialize`; default 10 000. */
  requestTimeoutMs?: number;
  /** `initialize`, which on a loaded machine may take long; default 30 000. */
  initializeTimeoutMs?: number;
  /** A server process started, runs or failed (see servers()). */
  onStatusChange?: () => void;
  /** Persistent `xcache` for servers using the Sourcegraph extensions (namespaced per server). */
  xcache?: XCache;
  /** Is a workspace folder trusted (src/config/trust.ts)? Only then are programs it ships run. Default: none is. */
  trustedFolder?: (root: string) => boolean;
}

const MAX_REPORTED = 20;
/** Defaults of the diagnostics wait (see diagnostics.ts): quiet time once ready, and the cap. */
const QUIET_MS = 3000;
const CAP_MS = 30_000;

function unavailable(reason: string): FileDiagnostics {
  return {
    kind: 'unavailable',
    reason,
    note: `Diagnostics: not available — ${reason.replace(/\.+$/, '')}. Do not take the file as free of errors: check it with lsp_diagnostics later.`,
  };
}

export class LspHostImpl implements LspHost {
  // Resolved against the folders: again when they change (an untrusted folder may refuse a built-in).
  private configs = new Map<string, LanguageServerConfig>();
  private disabled = new Map<string, LanguageServerConfig>();
  private problems: Array<{ name: string; command: string; error: string }> = [];
  /** Built-ins not offered because only an untrusted workspace has them: name → why. */
  private untrusted = new Map<string, string>();
  /** One process per server and project root; `folder` is the workspace folder it was started for. */
  private readonly processes = new Map<string, { name: string; root: string; folder: string; proc: LanguageServerProcess }>();
  /** The stops of removed folders' processes still under way: dispose waits for them too (each kills its process if it must). */
  private readonly stopping = new Set<Promise<void>>();
  /** The workspace folders now (setRoots replaces them). */
  private roots: string[];
  private readonly store = new DiagnosticsStore();
  private readonly log: Logger;
  private readonly restart: RestartPolicy;
  private disposed = false;

  constructor(private readonly opts: LspHostOptions) {
    this.log = opts.log ?? logger('lsp');
    this.roots = opts.roots.map((r) => resolve(r));
    this.restart = { baseDelayMs: 1000, maxRestarts: 5, ...opts.restart };
    this.resolve(opts.servers);
  }

  /** Which servers may run for the folders of now; what is new is logged. */
  private resolve(servers: Record<string, unknown>): void {
    const before = { problems: new Set(this.problems.map((p) => p.error)), untrusted: new Map(this.untrusted) };
    const resolved = resolveServers(servers, this.roots, this.opts.env, { trustedFolder: this.opts.trustedFolder });
    this.configs = resolved.servers;
    this.disabled = resolved.disabled;
    this.problems = resolved.problems;
    this.untrusted = resolved.untrusted;
    for (const p of this.problems) if (!before.problems.has(p.error)) this.log.warn(p.error);
    for (const [name, note] of this.untrusted) if (before.untrusted.get(name) !== note) this.log.info(`${name}: ${note}`);
  }

  tools(): Tool[] {
    return lspTools(this);
  }

  /** The server process for a file (started lazily), or undefined when no server handles it. */
  processFor(path: string): { name: string; root: string; folder: string; proc: LanguageServerProcess } | undefined {
    if (this.disposed) return undefined;
    const ext = extensionOf(path);
    const languageId = languageIdOf(path);
    for (const [name, config] of this.configs) {
      if (!config.extensions?.includes(ext) && !config.languageIds?.includes(languageId)) continue;
      const folder = this.folderOf(path);
      if (!folder) return undefined;
      const root = this.rootFor(path, folder, config.rootMarkers ?? []);
      const key = `${name}\0${root}`;
      let entry = this.processes.get(key);
      if (!entry) {
        const proc: LanguageServerProcess = new LanguageServerProcess({
          name,
          config,
          root,
          env: this.opts.env,
          restart: this.restart,
          log: this.log,
          requestTimeoutMs: config.requestTimeoutSeconds !== undefined ? config.requestTimeoutSeconds * 1000 : (this.opts.requestTimeoutMs ?? 10_000),
          initializeTimeoutMs: this.opts.initializeTimeoutMs ?? 30_000,
          onDiagnostics: (p) => {
            if (!this.disposed && this.keeps(proc, p.uri)) this.store.record(p);
          },
          xcache: this.opts.xcache,
          needs: BUILTIN_NEEDS[name],
          onStatus: () => {
            if (!this.disposed) this.opts.onStatusChange?.();
          },
        });
        entry = { name, root, folder, proc };
        this.processes.set(key, entry);
      }
      return entry;
    }
    return undefined;
  }

  /** The nearest ancestor with a root marker inside the workspace folder holding the file, else that folder. */
  private rootFor(path: string, folder: string, markers: string[]): string {
    for (let dir = dirname(path); dir.startsWith(folder); dir = dirname(dir)) {
      if (markers.some((m) => existsSync(join(dir, m)))) return dir;
      if (dir === folder || dirname(dir) === dir) break;
    }
    return folder;
  }

  /**
   * Diagnostics are kept only from a process still serving a folder (one being stopped after a
   * removal may still publish) and only for a file under a folder of now.
   */
  private keeps(proc: LanguageServerProcess, uri: string): boolean {
    return [...this.processes.values()].some((e) => e.proc === proc) && this.covered(uri);
  }

  /** Is `uri` a file under one of the folders now? Compared as paths: URIs spell the same path in several ways. */
  private covered(uri: string): boolean {
    let path: string;
    try {
      path = fileURLToPath(uri);
    } catch {
      return false;
    }
    return this.folderOf(resolve(path)) !== undefined;
  }

  folderOf(path: string): string | undefined {
    const inside = this.roots.filter((r) => path === r || path.startsWith(r.endsWith(sep) ? r : r + sep));
    return inside.sort((a, b) => b.length - a.length)[0];
  }

  /** Absolute path for what the model gave (relative paths are against the first workspace folder). */
  absolute(path: string): string {
    return isAbsolute(path) ? resolve(path) : resolve(this.roots[0] ?? process.cwd(), path);
  }

  /** Path as shown to the model: relative to its workspace folder when inside one. */
  display(path: string): string {
    const folder = this.folderOf(path);
    return folder && this.roots.length === 1 ? relative(folder, path) || path : path;
  }

  /**
   * Opens or updates a file in its server from disk; undefined when no server takes it. Throws,
   * with the server's own error, when one takes it but cannot run.
   */
  async sync(path: string, save: boolean): Promise<{ name: string; proc: LanguageServerProcess; uri: string; text: string; version: number; changed: boolean } | undefined> {
    const entry = this.processFor(path);
    if (!entry) return undefined;
    const text = await readFile(path, 'utf8');
    const uri = pathToFileURL(path).href;
    const synced = await entry.proc.sync(uri, languageIdOf(path), text, save);
    if (!synced) throw new Error(entry.proc.describe());
    return { name: entry.name, proc: entry.proc, uri, text, ...synced };
  }

  /** A file was touched (read, written, mentioned): start its server now, so it is ready when diagnostics are wanted. */
  touch(path: string): void {
    this.processFor(this.absolute(path))
      ?.proc.ready()
      .catch(() => undefined);
  }

  fileRead(path: string): void {
    this.sync(this.absolute(path), false).catch((e) => this.log.debug(`lsp open ${path}: ${errorMessage(e)}`));
  }

  async afterFileChange(path: string, signal: AbortSignal): Promise<FileDiagnostics> {
    const abs = this.absolute(path);
    const uri = pathToFileURL(abs).href;
    const before = this.store.get(uri)?.seq ?? 0;
    const started = Date.now();
    if (signal.aborted) return { kind: 'none', note: '' };
    let synced;
    let onAbort = () => {};
    try {
      // A server still starting (bounded by the initialize timeout) must not hold up a stopped prompt.
      const aborted = new Promise<undefined>((r) => ((onAbort = () => r(undefined)), signal.addEventListener('abort', onAbort, { once: true })));
      synced = await Promise.race([this.sync(abs, true), aborted]);
    } catch (e) {
      this.log.debug(`lsp sync ${path}: ${errorMessage(e)}`);
      return unavailable(errorMessage(e));
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    if (!synced || signal.aborted) return { kind: 'none', note: '' };
    const { version, changed, proc, name } = synced;
    const fresh = (p: Published | undefined) => !!p && (p.version === version || (p.version == null && p.seq > before));
    let end: WaitEnd = 'ok';
    if (changed || !this.store.get(uri)) end = await this.awaitFresh(synced, fresh, signal);
    const current = this.store.get(uri);
    if (!current || (changed && !fresh(current))) {
      if (end === 'aborted' || signal.aborted) return { kind: 'none', note: '' };
      return unavailable(this.whyNone(end, proc, name, started));
    }
    const errors = current.items.filter((d) => d.severity === 'error');
    if (!errors.length) return { kind: 'clean', note: '' };
    const lines = errors.slice(0, MAX_REPORTED).map((d) => formatDiagnostic(this.display(abs), d, synced.text));
    if (errors.length > MAX_REPORTED) lines.push(`… and ${errors.length - MAX_REPORTED} more errors`);
    const text = lines.join('\n');
    return { kind: 'errors', errors: text, note: `The language server now reports these errors in the file:\n${text}` };
  }

  /**
   * Opens the file if needed and waits (bounded) for its first diagnostics. Returns false when no
   * server takes it, else why none could be had ('' when they are in).
   */
  async awaitDiagnostics(path: string, signal: AbortSignal): Promise<string | false> {
    const abs = this.absolute(path);
    const started = Date.now();
    const synced = await this.sync(abs, false);
    if (!synced) return false;
    if (this.store.get(synced.uri)) return '';
    const end = await this.awaitFresh(synced, (p) => !!p, signal);
    return this.store.get(synced.uri) ? '' : this.whyNone(end, synced.proc, synced.name, started);
  }

  /** Pulls the document's diagnostics when the server offers it, else waits for them to be pushed. */
  private async awaitFresh(synced: { name: string; proc: LanguageServerProcess; uri: string; version: number }, ok: (p: Published | undefined) => boolean, signal: AbortSignal): Promise<WaitEnd> {
    const { name, proc, uri, version } = synced;
    const limits = this.limits(name);
    if (proc.pullsDiagnostics) return this.pull(proc, uri, version, limits, signal);
    const end = await this.store.waitFor(uri, ok, proc, name, limits, signal);
    if (end !== 'timeout') return end;
    // Ran out at the cap while the server was still loading: say so, and stop waiting the cap for a server that never publishes.
    const loading = proc.loading();
    if (!this.store.get(uri)) proc.markSilent();
    return loading ? 'loading' : 'timeout';
  }

  /** `textDocument/diagnostic` (specs 3.17 "Document Diagnostics"), asked again while the server says it is not ready. */
  private async pull(proc: LanguageServerProcess, uri: string, version: number, limits: WaitLimits, signal: AbortSignal): Promise<WaitEnd> {
    const deadline = Date.now() + limits.capMs;
    for (;;) {
      try {
        const report = documentDiagnosticReportSchema.parse(await proc.request('textDocument/diagnostic', { textDocument: { uri } }, signal, Math.max(1, deadline - Date.now())));
        if (!this.keeps(proc, uri)) return 'failed';
        if (report.kind === 'full') this.store.record({ uri, version, diagnostics: report.items });
        else this.store.confirm(uri, version);
        return 'ok';
      } catch (e) {
        if (signal.aborted) return 'aborted';
        if (proc.status === 'failed' || proc.status === 'stopped') return 'failed';
        // ServerCancelled (-32802): the server wants to be asked again, e.g. once its project is loaded.
        if ((e as { code?: unknown }).code === ServerCancelled && Date.now() + 200 < deadline) {
          await new Promise((r) => setTimeout(r, 200));
          continue;
        }
        this.log.debug(`lsp pull diagnostics ${uri}: ${errorMessage(e)}`);
        return 'timeout';
      }
    }
  }

  private limits(name: string): WaitLimits {
    const perServer = this.configs.get(name)?.diagnosticsTimeoutSeconds;
    return { quietMs: this.opts.diagnosticsWaitMs ?? QUIET_MS, capMs: perServer !== undefined ? perServer * 1000 : (this.opts.diagnosticsMaxWaitMs ?? CAP_MS) };
  }

  /** Why a wait ended without diagnostics, in words the model can act on. */
  private whyNone(end: WaitEnd, proc: LanguageServerProcess, name: string, started: number): string {
    const waited = `waited ${Math.round((Date.now() - started) / 1000)} s`;
    if (end === 'failed' || proc.status === 'failed') return proc.describe();
    if (end === 'loading') return `${name} is still loading the project (${waited})`;
    return `${name} sent none (${waited})${proc.error ? `; its last error: ${proc.error}` : ''}`;
  }

  diagnostics(path?: string): Diagnostic[] {
    if (path === undefined) return this.store.all();
    return this.store.get(pathToFileURL(this.absolute(path)).href)?.items ?? [];
  }

  /** One file of each language a server takes, found near the top of the workspace folders. */
  async sampleFiles(signal: AbortSignal): Promise<string[]> {
    const wanted = new Set([...this.configs.values()].flatMap((c) => c.extensions ?? []));
    const found = new Map<string, string>();
    const queue = this.rootsList().map((r) => ({ dir: r, depth: 0 }));
    let seen = 0;
    while (queue.length && seen < 2000 && !signal.aborted) {
      const { dir, depth } = queue.shift()!;
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const e of entries) {
        seen += 1;
        if (e.isDirectory() && depth < 4 && !e.name.startsWith('.') && e.name !== 'node_modules') queue.push({ dir: join(dir, e.name), depth: depth + 1 });
        const ext = extensionOf(e.name);
        if (e.isFile() && wanted.has(ext) && !found.has(ext)) found.set(ext, join(dir, e.name));
      }
    }
    return [...found.values()];
  }

  async probe(signal: AbortSignal): Promise<void> {
    const procs = new Set((await this.sampleFiles(signal)).flatMap((f) => this.processFor(f)?.proc ?? []));
    const stopped = new Promise<void>((r) => (signal.aborted ? r() : signal.addEventListener('abort', () => r(), { once: true })));
    await Promise.race([Promise.all([...procs].map((p) => p.ready().catch(() => false))), stopped]);
  }

  /** Running processes, for workspace-wide requests. */
  running(): LanguageServerProcess[] {
    return [...this.processes.values()].filter((e) => e.proc.status === 'running').map((e) => e.proc);
  }

  rootsList(): string[] {
    return [...this.roots];
  }

  /**
   * The workspace folders changed. Each process serves the one folder it was initialized with
   * (its `workspaceFolders`), so nothing is sent to running servers: files of an added folder start
   * their own servers when touched, and the servers of a removed folder are stopped, their
   * diagnostics forgotten. Which servers may start is decided again for the new folders and
   * `servers` (the config now): an added untrusted folder refuses what it would refuse at start.
   */
  async setRoots(roots: string[], removed: string[], servers: Record<string, unknown> = this.opts.servers): Promise<void> {
    this.roots = roots.map((r) => resolve(r));
    this.resolve(servers);
    const gone = new Set(removed.map((r) => resolve(r)));
    const stopping = [...this.processes].filter(([, e]) => gone.has(e.folder));
    for (const [key] of stopping) this.processes.delete(key);
    // What is under no folder now goes; a nested folder that stays (`/p/sub` when `/p` goes) keeps its own.
    const forget = () => this.store.forget((uri) => !this.covered(uri));
    forget();
    const stops = stopping.map(([, e]) => {
      const stop = e.proc.dispose().catch((err) => this.log.warn(`${e.name}: ${errorMessage(err)}`));
      this.stopping.add(stop);
      return stop.finally(() => this.stopping.delete(stop));
    });
    await Promise.all(stops);
    // Anything recorded while they stopped (a pull answered late) goes too.
    forget();
    if (stopping.length && !this.disposed) this.opts.onStatusChange?.();
  }

  configured(): Map<string, LanguageServerConfig> {
    return this.configs;
  }

  servers(): LspServerInfo[] {
    const out: LspServerInfo[] = [];
    const base = (name: string, c: { command: string; args?: string[] }) => ({ name, command: c.command, args: c.args ?? [], roots: [] as string[], restarts: 0 });
    for (const [name, config] of this.configs) {
      const procs = [...this.processes.values()].filter((e) => e.name === name);
      const infos = procs.map((e) => e.proc.info());
      const has = (s: LspServerInfo['status']) => infos.some((i) => i.status === s);
      const status = has('running') ? 'running' : has('starting') ? 'starting' : has('failed') ? 'failed' : 'stopped';
      const lastError = infos.find((i) => i.lastError)?.lastError;
      const needs = status === 'failed' ? BUILTIN_NEEDS[name] : undefined;
      out.push({
        ...base(name, config),
        status,
        roots: procs.map((e) => e.root),
        restarts: infos.reduce((n, i) => n + i.restarts, 0),
        ...(lastError ? { lastError } : {}),
        ...(needs ? { needs } : {}),
      });
    }
    for (const [name, config] of this.disabled) out.push({ ...base(name, config), status: 'disabled' });
    for (const [name, note] of this.untrusted) {
      if (!this.configs.has(name) && !this.disabled.has(name)) out.push({ ...base(name, BUILTIN_SERVERS[name] ?? { command: name }), status: 'disabled', note });
    }
    for (const p of this.problems) out.push({ ...base(p.name, { command: p.command }), status: 'failed', lastError: p.error });
    return out;
  }

  /** At once: SIGKILL to every language server's process tree (its workspace's shutdown ran past its deadline). */
  forceClose(): void {
    this.disposed = true;
    killTreesNow([...this.processes.values()].map((e) => e.proc.pid));
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    await Promise.all([
      ...[...this.processes.values()].map((e) => e.proc.dispose().catch((err) => this.log.warn(`${e.name}: ${errorMessage(err)}`))),
      // Servers of removed folders still stopping: their stop ends (killing them if need be) before we do.
      ...this.stopping,
    ]);
  }
}
