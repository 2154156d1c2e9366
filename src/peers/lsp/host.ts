/**
 * The LSP peer for one workspace: picks the language server for a file, starts one process per
 * project root lazily, keeps documents in sync, collects diagnostics, and serves the LSP tools.
 */
import type { XCache } from './sourcegraph.js';
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Tool } from '../../core/tool.js';
import { errorMessage, logger, type Logger } from '../../util/log.js';
import { resolveServers } from './config.js';
import { extensionOf, languageIdOf } from './documents.js';
import { formatDiagnostic } from './format.js';
import { LanguageServerProcess, type RestartPolicy } from './server.js';
import { lspTools } from './tools.js';
import type { LanguageServerConfig, LspHost, LspServerInfo } from './types.js';
import type { PublishDiagnostics } from './wire.js';

export interface LspHostOptions {
  /** `languageServers` from the config, unvalidated: each entry is checked on its own. */
  servers: Record<string, unknown>;
  roots: string[];
  env: NodeJS.ProcessEnv;
  log?: Logger;
  /** Defaults: 1 s, doubling, at most 5 restarts. */
  restart?: Partial<RestartPolicy>;
  /** How long afterFileChange waits for fresh diagnostics; default 3000. */
  diagnosticsWaitMs?: number;
  /** Every request to a server, `initialize` included; default 10 000. */
  requestTimeoutMs?: number;
  /** Persistent `xcache` for servers using the Sourcegraph extensions (namespaced per server). */
  xcache?: XCache;
}

type Diagnostic = ReturnType<LspHost['diagnostics']>[number];
interface Published {
  version?: number | null;
  seq: number;
  items: Diagnostic[];
}
const SEVERITY = ['error', 'error', 'warning', 'info', 'hint'] as const;
const MAX_REPORTED = 20;
/**
 * Servers without versioned diagnostics may publish in steps (syntax, then semantics): wait for
 * quiet. A server seen TRUST_AFTER times in a row to publish once per change is trusted from then
 * on (typescript-language-server is), so its answers are not held back by the wait (bench/lsp.ts).
 */
const SETTLE_MS = 250;
const TRUST_AFTER = 3;

export class LspHostImpl implements LspHost {
  private readonly configs: Map<string, LanguageServerConfig>;
  private readonly disabled: Map<string, LanguageServerConfig>;
  private readonly problems: Array<{ name: string; command: string; error: string }>;
  private readonly processes = new Map<string, { name: string; root: string; proc: LanguageServerProcess }>();
  private readonly published = new Map<string, Published>();
  private readonly listeners = new Set<(uri: string) => void>();
  private readonly log: Logger;
  private readonly restart: RestartPolicy;
  private seq = 0;
  /** Per server: 'steps' once seen publishing in several steps, else how many single publishes in a row. */
  private readonly publishing = new Map<string, number | 'steps'>();
  private disposed = false;

  constructor(private readonly opts: LspHostOptions) {
    this.log = opts.log ?? logger('lsp');
    this.restart = { baseDelayMs: 1000, maxRestarts: 5, ...opts.restart };
    const resolved = resolveServers(opts.servers, opts.roots, opts.env);
    this.configs = resolved.servers;
    this.disabled = resolved.disabled;
    this.problems = resolved.problems;
    for (const p of this.problems) this.log.warn(p.error);
  }

  tools(): Tool[] {
    return lspTools(this);
  }

  /** The server process for a file (started lazily), or undefined when no server handles it. */
  processFor(path: string): { name: string; root: string; proc: LanguageServerProcess } | undefined {
    if (this.disposed) return undefined;
    const ext = extensionOf(path);
    const languageId = languageIdOf(path);
    for (const [name, config] of this.configs) {
      if (!config.extensions?.includes(ext) && !config.languageIds?.includes(languageId)) continue;
      const root = this.rootFor(path, config.rootMarkers ?? []);
      if (!root) return undefined;
      const key = `${name}\0${root}`;
      let entry = this.processes.get(key);
      if (!entry) {
        const proc = new LanguageServerProcess({
          name, config, root, env: this.opts.env, restart: this.restart, log: this.log,
          requestTimeoutMs: this.opts.requestTimeoutMs ?? 10_000,
          onDiagnostics: (p) => this.onDiagnostics(p),
          xcache: this.opts.xcache,
        });
        entry = { name, root, proc };
        this.processes.set(key, entry);
      }
      return entry;
    }
    return undefined;
  }

  /** The nearest ancestor with a root marker inside the workspace folder holding the file, else that folder. */
  private rootFor(path: string, markers: string[]): string | undefined {
    const folder = this.folderOf(path);
    if (!folder) return undefined;
    for (let dir = dirname(path); dir.startsWith(folder); dir = dirname(dir)) {
      if (markers.some((m) => existsSync(join(dir, m)))) return dir;
      if (dir === folder || dirname(dir) === dir) break;
    }
    return folder;
  }

  folderOf(path: string): string | undefined {
    const inside = this.opts.roots.map((r) => resolve(r)).filter((r) => path === r || path.startsWith(r.endsWith(sep) ? r : r + sep));
    return inside.sort((a, b) => b.length - a.length)[0];
  }

  /** Absolute path for what the model gave (relative paths are against the first workspace folder). */
  absolute(path: string): string {
    return isAbsolute(path) ? resolve(path) : resolve(this.opts.roots[0] ?? process.cwd(), path);
  }

  /** Path as shown to the model: relative to its workspace folder when inside one. */
  display(path: string): string {
    const folder = this.folderOf(path);
    return folder && this.opts.roots.length === 1 ? relative(folder, path) || path : path;
  }

  /** Opens or updates a file in its server from disk; undefined when no server takes it. */
  async sync(path: string, save: boolean): Promise<{ proc: LanguageServerProcess; uri: string; text: string; version: number; changed: boolean } | undefined> {
    const entry = this.processFor(path);
    if (!entry) return undefined;
    const text = await readFile(path, 'utf8');
    const uri = pathToFileURL(path).href;
    const synced = await entry.proc.sync(uri, languageIdOf(path), text, save);
    return synced && { proc: entry.proc, uri, text, ...synced };
  }

  fileRead(path: string): void {
    this.sync(this.absolute(path), false).catch((e) => this.log.debug(`lsp open ${path}: ${errorMessage(e)}`));
  }

  async afterFileChange(path: string, signal: AbortSignal): Promise<string> {
    const abs = this.absolute(path);
    const uri = pathToFileURL(abs).href;
    const before = this.published.get(uri)?.seq ?? 0;
    let synced;
    let onAbort = () => {};
    try {
      // A server still starting (bounded by the initialize timeout) must not hold up a stopped prompt.
      const aborted = new Promise<undefined>((r) => ((onAbort = () => r(undefined)), signal.addEventListener('abort', onAbort, { once: true })));
      synced = await Promise.race([this.sync(abs, true), aborted]);
    } catch (e) {
      this.log.debug(`lsp sync ${path}: ${errorMessage(e)}`);
      return '';
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    if (!synced || signal.aborted) return '';
    const { version, changed } = synced;
    const fresh = (p: Published | undefined) => !!p && (p.version === version || (p.version == null && p.seq > before));
    if (changed || !this.published.has(uri)) await this.waitFor(uri, fresh, this.opts.diagnosticsWaitMs ?? 3000, signal, this.processFor(abs)?.name ?? '');
    const current = this.published.get(uri);
    if (!current || (changed && !fresh(current))) return '';
    const errors = current.items.filter((d) => d.severity === 'error');
    const lines = errors.slice(0, MAX_REPORTED).map((d) => formatDiagnostic(this.display(abs), d, synced.text));
    if (errors.length > MAX_REPORTED) lines.push(`… and ${errors.length - MAX_REPORTED} more errors`);
    return lines.join('\n');
  }

  /** Opens the file if needed and waits (bounded) for its first diagnostics; false when no server takes it. */
  async awaitDiagnostics(path: string, signal: AbortSignal): Promise<boolean> {
    const abs = this.absolute(path);
    const synced = await this.sync(abs, false);
    if (!synced) return false;
    if (!this.published.has(synced.uri)) await this.waitFor(synced.uri, (p) => !!p, this.opts.diagnosticsWaitMs ?? 3000, signal, this.processFor(abs)?.name ?? '');
    return true;
  }

  /** Resolves when `ok` holds for the uri's diagnostics (then quiet for SETTLE_MS if unversioned), the time is up, or on abort. */
  private waitFor(uri: string, ok: (p: Published | undefined) => boolean, ms: number, signal: AbortSignal, server: string): Promise<void> {
    return new Promise((done) => {
      let settle: NodeJS.Timeout | undefined;
      let matches = 0;
      const finish = () => {
        clearTimeout(deadline);
        clearTimeout(settle);
        this.listeners.delete(check);
        signal.removeEventListener('abort', finish);
        done();
      };
      const check = (u: string) => {
        if (u !== uri) return;
        const p = this.published.get(uri);
        if (!ok(p)) return;
        const seen = this.publishing.get(server);
        if (p!.version != null || (typeof seen === 'number' && seen >= TRUST_AFTER)) return finish();
        // A second matching publish inside the quiet window: this server reports in steps.
        if (++matches > 1) this.publishing.set(server, 'steps');
        clearTimeout(settle);
        settle = setTimeout(() => {
          const now = this.publishing.get(server);
          if (now !== 'steps') this.publishing.set(server, (now ?? 0) + 1);
          finish();
        }, SETTLE_MS);
      };
      const deadline = setTimeout(finish, ms);
      signal.addEventListener('abort', finish, { once: true });
      this.listeners.add(check);
      check(uri);
    });
  }

  private onDiagnostics(p: PublishDiagnostics): void {
    if (this.disposed) return;
    const items: Diagnostic[] = p.diagnostics.map((d) => ({
      uri: p.uri,
      severity: SEVERITY[d.severity ?? 1],
      message: d.message,
      range: d.range,
      ...(d.source !== undefined ? { source: d.source } : {}),
      ...(d.code !== undefined ? { code: String(d.code) } : {}),
    }));
    this.published.set(p.uri, { version: p.version, seq: ++this.seq, items });
    for (const l of [...this.listeners]) l(p.uri);
  }

  diagnostics(path?: string): Diagnostic[] {
    if (path === undefined) return [...this.published.values()].flatMap((p) => p.items);
    return this.published.get(pathToFileURL(this.absolute(path)).href)?.items ?? [];
  }

  /** Running processes, for workspace-wide requests. */
  running(): LanguageServerProcess[] {
    return [...this.processes.values()].filter((e) => e.proc.status === 'running').map((e) => e.proc);
  }

  rootsList(): string[] {
    return this.opts.roots.map((r) => resolve(r));
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
      out.push({ ...base(name, config), status, roots: procs.map((e) => e.root), restarts: infos.reduce((n, i) => n + i.restarts, 0), ...(lastError ? { lastError } : {}) });
    }
    for (const [name, config] of this.disabled) out.push({ ...base(name, config), status: 'disabled' });
    for (const p of this.problems) out.push({ ...base(p.name, { command: p.command }), status: 'failed', lastError: p.error });
    return out;
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    await Promise.all([...this.processes.values()].map((e) => e.proc.dispose().catch((err) => this.log.warn(`${e.name}: ${errorMessage(err)}`))));
  }
}
