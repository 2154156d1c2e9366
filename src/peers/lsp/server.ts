/**
 * One language-server process for one root (specs/lsp-3.0.md "Lifecycle Messages"): spawn,
 * `initialize`/`initialized`, document sync, requests with timeouts, `shutdown`/`exit`. Its
 * lifecycle is an explicit state machine; a crash, a hang on initialize or a malformed frame
 * marks it failed and schedules a bounded restart with exponential backoff.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, type Message, type MessageConnection } from 'vscode-jsonrpc';
import { FramedReader } from '../../rpc/framing.js';
import { failPending, request, RequestError } from '../../rpc/request.js';
import { FramedWriter } from '../../rpc/writer.js';
import { errorMessage, type Logger } from '../../util/log.js';
import { descendants, killAll } from '../../util/process-tree.js';
import { OpenDocuments, incrementalChange } from './documents.js';
import { registerSourcegraphHandlers, serverSupports, sourcegraphClientCapabilities } from './sourcegraph.js';
import type { XCache } from '../../shapes/xcache.js';

function memoryXCache(): XCache {
  const m = new Map<string, unknown>();
  return { get: (ns, key) => m.get(`${ns}\u0000${key}`), set: (ns, key, value) => void m.set(`${ns}\u0000${key}`, value) };
}
import type { LanguageServerConfig, LspServerInfo } from './types.js';
import { initializeResultSchema as InitializeResultSchema, publishDiagnosticsSchema as PublishDiagnosticsSchema, type PublishDiagnostics, type ServerCapabilities } from '../../protocol/lsp/index.js';

export interface RestartPolicy {
  baseDelayMs: number;
  maxRestarts: number;
}

export interface ServerOptions {
  name: string;
  config: LanguageServerConfig;
  root: string;
  env: NodeJS.ProcessEnv;
  restart: RestartPolicy;
  requestTimeoutMs: number;
  /** `initialize` only: a server may take long to start on a loaded machine. */
  initializeTimeoutMs: number;
  log: Logger;
  onDiagnostics(params: PublishDiagnostics): void;
  /** Called when the process starts, runs or fails: lazily started servers are announced from here. */
  onStatus?: () => void;
  /** What the server needs to run, said with its failure (built-ins: BUILTIN_NEEDS). */
  needs?: string;
  /** Backs `xcache/get` / `xcache/set` (Sourcegraph extensions); in memory when absent. */
  xcache?: XCache;
}

interface Live {
  proc: ChildProcess;
  conn: MessageConnection;
  /** Resolves once this process is torn down (failed or stopped), when its failure has a reason. */
  gone: Promise<void>;
  ended: () => void;
}
type State =
  | { kind: 'idle' }
  | ({ kind: 'starting'; ready: Promise<void> } & Live)
  | ({ kind: 'running'; capabilities: ServerCapabilities } & Live)
  | { kind: 'failed'; error: string; retry?: NodeJS.Timeout }
  | { kind: 'stopped' };

/**
 * Write failures (EPIPE after a crash) reach us through the writer's error event (→ fail()); the
 * write promise itself must not reject, because vscode-jsonrpc rethrows it from an async Promise
 * executor in sendRequest, where nothing can catch it.
 */
class QuietWriter extends FramedWriter {
  override write(msg: Message): Promise<void> {
    return super.write(msg).catch(() => undefined);
  }
}

const SYMBOL_KIND_SET = { valueSet: Array.from({ length: 26 }, (_, i) => i + 1) };

/** What patchbay really does with each feature (no dynamic registration, full-text sync). */
export const CLIENT_CAPABILITIES = {
  // workDoneProgress: servers report project loading ($/progress begin..end), which bounds the diagnostics wait.
  window: { workDoneProgress: true },
  workspace: { workspaceFolders: true, configuration: true, symbol: { dynamicRegistration: false, symbolKind: SYMBOL_KIND_SET } },
  textDocument: {
    synchronization: { dynamicRegistration: false, willSave: false, willSaveWaitUntil: false, didSave: true },
    publishDiagnostics: { relatedInformation: false, versionSupport: true },
    // Pull diagnostics (3.17): the deterministic way to get a document's diagnostics when the server offers it.
    diagnostic: { dynamicRegistration: false, relatedDocumentSupport: false },
    definition: { dynamicRegistration: false, linkSupport: true },
    references: { dynamicRegistration: false },
    hover: { dynamicRegistration: false, contentFormat: ['markdown', 'plaintext'] },
    documentSymbol: { dynamicRegistration: false, hierarchicalDocumentSymbolSupport: true, symbolKind: SYMBOL_KIND_SET },
  },
};

/**
 * Not for a language server: LLM provider keys (OPENAI_API_KEY, ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, …),
 * the provider gateway's token and address, and PATCHBAY_CONFIG (a config given inline may hold keys). A server starts on its own when a file is opened,
 * in any repository, and runs that project's tooling (tsserver plugins, build scripts): it gets
 * no key it has no use for. Everything else it may need (GOPATH, CARGO_HOME, VIRTUAL_ENV, proxies,
 * a registry's token) is kept; the entry's own `env` may still name anything on purpose.
 */
const NOT_FOR_LANGUAGE_SERVERS = /_API_KEY$|^ANTHROPIC_AUTH_TOKEN$|^PATCHBAY_PROVIDER_TOKEN$|^TAP_PROVIDER_TOKEN$|^PATCHBAY_GATEWAY_URL$|^PATCHBAY_CONFIG$/i;

/** patchbay's environment without what NOT_FOR_LANGUAGE_SERVERS names. */
export function languageServerEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !NOT_FOR_LANGUAGE_SERVERS.test(k)));
}

export class LanguageServerProcess {
  private state: State = { kind: 'idle' };
  private restarts = 0;
  private lastError: string | undefined;
  /** Work-done progress tokens begun and not yet ended: the server is busy (loading a project). */
  private readonly progress = new Set<string | number>();
  /** Whether this server has published diagnostics at all, or was seen staying silent (then it is not waited for). */
  private publishes: 'unknown' | 'yes' | 'silent' = 'unknown';
  /** The end of the server's stderr: a process that dies at start usually says why there. */
  private stderrTail = '';
  readonly documents = new OpenDocuments();

  constructor(private readonly opts: ServerOptions) {}

  get status(): LspServerInfo['status'] {
    return this.state.kind === 'idle' ? 'stopped' : this.state.kind;
  }

  info(): Pick<LspServerInfo, 'status' | 'restarts' | 'lastError'> {
    return { status: this.status, restarts: this.restarts, lastError: this.lastError };
  }

  /** The error that made it unusable, or an error it showed (`window/showMessage`), if any. */
  get error(): string | undefined {
    return this.lastError;
  }

  /**
   * Still getting ready: starting, reporting work in progress, or (until it has published once or
   * was seen silent) not yet done with its first diagnostics, which come after the project loads.
   */
  loading(): boolean {
    if (this.state.kind === 'starting' || this.state.kind === 'idle') return true;
    return this.state.kind === 'running' && (this.progress.size > 0 || this.publishes === 'unknown');
  }

  /** A wait for diagnostics ran out while nothing was published: stop treating the server as loading. */
  markSilent(): void {
    if (this.publishes === 'unknown') this.publishes = 'silent';
  }

  /** Why it is not usable, for the model: "<name> failed: <error>" or "<name> is <status>". */
  describe(): string {
    const { name } = this.opts;
    if (this.state.kind === 'failed') return `${name} failed: ${this.lastError ?? 'unknown error'}${this.opts.needs ? ` (${name} needs ${this.opts.needs})` : ''}`;
    return `${name} is ${this.status}${this.lastError ? ` (last error: ${this.lastError})` : ''}`;
  }

  /** Each request's deadline, for the extension helpers that send on `connection()`. */
  get requestTimeoutMs(): number {
    return this.opts.requestTimeoutMs;
  }

  get pid(): number | undefined {
    return 'proc' in this.state ? this.state.proc.pid : undefined;
  }

  /** Starts the process on first use; resolves true once it is running, false if it is not usable now. */
  async ready(): Promise<boolean> {
    if (this.state.kind === 'idle') this.start();
    if (this.state.kind === 'starting') await this.state.ready.catch(() => undefined);
    return this.state.kind === 'running';
  }

  private start(): void {
    const { config, root, env, name, log } = this.opts;
    let proc: ChildProcess;
    try {
      proc = spawn(config.command, config.args ?? [], { cwd: root, env: { ...languageServerEnv(env), ...config.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    } catch (e) {
      this.fail(`cannot start ${config.command}: ${errorMessage(e)}`);
      return;
    }
    const writer = new QuietWriter(proc.stdin!);
    const reader = new FramedReader(proc.stdout!, (fault) => this.fail(`malformed message from the server: ${fault.message}`, proc));
    const conn = createMessageConnection(reader, writer, {
      error: (m) => log.warn(`${name}: ${m}`),
      warn: (m) => log.warn(`${name}: ${m}`),
      info: (m) => log.debug(`${name}: ${m}`),
      log: (m) => log.debug(`${name}: ${m}`),
    });
    proc.on('error', (e) => this.fail(`cannot start ${config.command}: ${e.message}`, proc));
    proc.on('exit', (code, signal) => this.fail(`exited (${signal ?? `code ${code}`})${this.stderrSummary()}`, proc));
    proc.stdin!.on('error', () => undefined); // EPIPE after a crash: reported by 'exit'
    this.stderrTail = '';
    this.progress.clear();
    proc.stderr!.setEncoding('utf8').on('data', (d: string) => {
      log.debug(`${name} stderr: ${d.trimEnd().slice(0, 2000)}`);
      this.stderrTail = (this.stderrTail + d).slice(-4000);
    });
    conn.onError(([e]) => this.fail(`connection error: ${e.message}`, proc));
    // The exit event, which says why, usually follows the pipe closing: give it a moment.
    conn.onClose(() => setTimeout(() => this.fail('connection closed', proc), 200).unref());
    conn.onNotification('textDocument/publishDiagnostics', (raw: unknown) => {
      const parsed = PublishDiagnosticsSchema.safeParse(raw);
      if (parsed.success) {
        this.publishes = 'yes';
        this.opts.onDiagnostics(parsed.data);
      } else log.warn(`${name}: ignored a bad publishDiagnostics: ${parsed.error.message.slice(0, 300)}`);
    });
    // A server that cannot work often says so only here (specs/lsp-3.0.md "ShowMessage Notification"); type 1 = Error.
    conn.onNotification('window/showMessage', (p: { type?: unknown; message?: unknown }) => this.shown(p));
    conn.onRequest('window/showMessageRequest', (p: { type?: unknown; message?: unknown }) => (this.shown(p), null));
    // Progress for tokens nobody asked to watch (server-initiated, "window/workDoneProgress/create") arrives here.
    conn.onUnhandledProgress((p: { token?: unknown; value?: { kind?: unknown } }) => {
      const token = p?.token;
      if (typeof token !== 'string' && typeof token !== 'number') return;
      if (p.value?.kind === 'begin') this.progress.add(token);
      else if (p.value?.kind === 'end') this.progress.delete(token);
    });
    conn.onNotification('window/logMessage', (p: { message?: unknown }) => log.debug(`${name}: ${String(p?.message).slice(0, 2000)}`));
    // Server → client requests we support; anything else is answered −32601 by vscode-jsonrpc.
    conn.onRequest('workspace/configuration', (p: { items?: unknown[] }) => (Array.isArray(p?.items) ? p.items.map(() => null) : []));
    conn.onRequest('workspace/workspaceFolders', () => [{ uri: pathToFileURL(root).href, name: basename(root) }]);
    conn.onRequest('window/workDoneProgress/create', () => null);
    conn.onRequest('client/registerCapability', () => null);
    // Sourcegraph extensions (specs/lsp-sourcegraph-extensions.md): files and contents come from
    // the workspace and from the documents patchbay has open (its overlay).
    registerSourcegraphHandlers(conn, {
      roots: [root],
      overlay: (uri) => this.documents.get(uri),
      overlayUris: () => this.documents.entries().map(([uri]) => uri),
      cache: this.opts.xcache ?? memoryXCache(),
      namespace: name,
    });
    conn.listen();
    let ended!: () => void;
    const gone = new Promise<void>((r) => (ended = r));
    const live = { proc, conn, gone, ended };
    const ready = this.initialize(live);
    this.state = { kind: 'starting', ready, ...live };
    this.opts.onStatus?.();
    ready.catch((e) => this.fail(errorMessage(e), proc));
  }

  private shown(p: { type?: unknown; message?: unknown }): void {
    const message = String(p?.message ?? '').slice(0, 2000);
    if (p?.type !== 1 || !message) return this.opts.log.debug(`${this.opts.name}: ${message}`);
    this.lastError = message;
    this.opts.log.warn(`${this.opts.name}: ${message}`);
  }

  /** The last lines of stderr, to say why a process exited. */
  private stderrSummary(): string {
    const lines = this.stderrTail
      .trim()
      .split(/\r?\n/)
      .filter((l) => l.trim());
    return lines.length ? `: ${lines.slice(-3).join(' | ').slice(0, 1000)}` : '';
  }

  private async initialize(live: Live): Promise<void> {
    const { root, config } = this.opts;
    const rootUri = pathToFileURL(root).href;
    const raw = await this.sendInitialize(live, {
      processId: process.pid,
      clientInfo: { name: 'patchbay' },
      rootPath: root,
      rootUri,
      workspaceFolders: [{ uri: rootUri, name: basename(root) }],
      initializationOptions: config.initializationOptions,
      capabilities: { ...CLIENT_CAPABILITIES, ...sourcegraphClientCapabilities() },
    });
    const result = InitializeResultSchema.safeParse(raw);
    if (!result.success) throw new Error(`bad initialize result: ${result.error.message.slice(0, 300)}`);
    if (this.state.kind !== 'starting' || this.state.proc !== live.proc) throw new Error('stopped while initializing');
    await live.conn.sendNotification('initialized', {});
    this.state = { kind: 'running', capabilities: result.data.capabilities, ...live };
    this.opts.onStatus?.();
    // After a restart, the new process learns the documents the old one had.
    for (const [uri, doc] of this.documents.entries()) {
      void live.conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: doc.languageId, version: doc.version, text: doc.text } });
    }
  }

  /** `initialize`, its failure named as such: the server's own words are what the user needs (e.g. no TypeScript found). */
  private sendInitialize(live: Live, params: unknown): Promise<unknown> {
    return this.send(live, 'initialize', params, undefined, this.opts.initializeTimeoutMs).catch((e: unknown) => {
      // vscode-languageserver wraps a handler's throw as "Request initialize failed with message: …".
      throw new Error(`initialize failed: ${errorMessage(e).replace(/^Request initialize failed with message: /, '')}`);
    });
  }

  /** A request with a timeout, cancelled by `signal` ($/cancelRequest), rejected if the process dies. */
  private async send(live: Live, method: string, params: unknown, signal?: AbortSignal, timeoutMs = this.opts.requestTimeoutMs): Promise<unknown> {
    try {
      return await request(live.conn, method, params, { timeoutMs, signal, cancel: 'lsp' });
    } catch (e) {
      if (!(e instanceof RequestError) || e.reason !== 'closed') throw e;
      // The pipe closes a moment before the exit that says why (fail() then names it): wait for it, briefly.
      await Promise.race([live.gone, new Promise((r) => setTimeout(r, 1000).unref())]);
      throw new Error(this.state.kind === 'failed' ? `${this.opts.name} failed: ${this.lastError ?? 'unknown error'}` : `${this.opts.name} stopped`, { cause: e });
    }
  }

  /** Whether the running server advertises a Sourcegraph extension (specs/lsp-sourcegraph-extensions.md). */
  supports(ext: 'xdefinition' | 'xreferences' | 'xworkspaceSymbolByProperties'): boolean {
    return this.state.kind === 'running' && serverSupports({ capabilities: this.state.capabilities } as never, ext);
  }

  /** The live connection, for the extension helpers; undefined unless running. */
  connection(): MessageConnection | undefined {
    return this.state.kind === 'running' ? this.state.conn : undefined;
  }

  async request(method: string, params: unknown, signal?: AbortSignal, timeoutMs?: number): Promise<unknown> {
    if (!(await this.ready())) throw new Error(this.describe());
    return this.send(this.state as Extract<State, { kind: 'running' }>, method, params, signal, timeoutMs);
  }

  /** Whether the running server answers `textDocument/diagnostic` (3.17 pull diagnostics). */
  get pullsDiagnostics(): boolean {
    return this.state.kind === 'running' && !!this.state.capabilities.diagnosticProvider;
  }

  /** didOpen, or didChange with full text (we never send ranges, which every sync kind accepts); then didSave. Returns the version sent. */
  async sync(uri: string, languageId: string, text: string, save: boolean): Promise<{ version: number; changed: boolean } | undefined> {
    if (!(await this.ready()) || this.state.kind !== 'running') return undefined;
    let changed = true;
    const { conn, capabilities } = this.state;
    let doc = this.documents.get(uri);
    if (!doc) {
      doc = this.documents.open(uri, languageId, text);
      await conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId, version: doc.version, text } });
    } else {
      const previous = doc.text;
      const version = this.documents.change(uri, text);
      changed = version !== undefined;
      const sync = capabilities.textDocumentSync;
      const changeKind = typeof sync === 'number' ? sync : sync?.change;
      if (version !== undefined && changeKind !== 0) {
        // Incremental when the server offers it (TextDocumentSyncKind.Incremental = 2): one minimal edit.
        const contentChanges = changeKind === 2 ? [incrementalChange(previous, text)] : [{ text }];
        await conn.sendNotification('textDocument/didChange', { textDocument: { uri, version }, contentChanges });
      }
    }
    if (save) {
      const saveOpt = typeof capabilities.textDocumentSync === 'object' ? capabilities.textDocumentSync.save : undefined;
      const includeText = typeof saveOpt === 'object' && saveOpt.includeText;
      await conn.sendNotification('textDocument/didSave', { textDocument: { uri }, ...(includeText ? { text } : {}) });
    }
    return { version: doc.version, changed };
  }

  /** A crash, a hang or garbage: kill what is left, settle everything pending, maybe restart. */
  private fail(error: string, proc?: ChildProcess): void {
    const s = this.state;
    if (s.kind === 'stopped' || s.kind === 'failed' || s.kind === 'idle') return;
    if (proc && s.proc !== proc) return; // an event from an older process
    this.lastError = error;
    this.opts.log.warn(`${this.opts.name} (${this.opts.root}) failed: ${error}`);
    this.teardown(s);
    const delay = this.opts.restart.baseDelayMs * 2 ** this.restarts;
    const retry =
      this.restarts < this.opts.restart.maxRestarts
        ? setTimeout(() => {
            if (this.state.kind !== 'failed') return;
            this.restarts += 1;
            this.opts.log.info(`${this.opts.name}: restart ${this.restarts}/${this.opts.restart.maxRestarts}`);
            this.start();
          }, delay)
        : undefined;
    retry?.unref();
    this.state = { kind: 'failed', error, retry };
    this.opts.onStatus?.();
  }

  private teardown(live: Live): void {
    failPending(live.conn, new Error(`${this.opts.name} ${this.lastError ? `failed: ${this.lastError}` : 'stopped'}`));
    live.ended();
    const pids = live.proc.pid ? [...descendants(live.proc.pid), live.proc.pid] : [];
    live.conn.dispose();
    void killAll(pids, 500);
  }

  /** `shutdown` then `exit` (specs/lsp-3.0.md "Shutdown Request"); killed if still alive after ~2 s. */
  async dispose(): Promise<void> {
    const s = this.state;
    this.state = { kind: 'stopped' };
    if (s.kind === 'failed') clearTimeout(s.retry);
    if (s.kind !== 'starting' && s.kind !== 'running') return;
    const { proc, conn } = s;
    const pids = proc.pid ? [...descendants(proc.pid), proc.pid] : [];
    const exited = new Promise<void>((r) => (proc.exitCode !== null || proc.signalCode !== null ? r() : proc.once('exit', () => r())));
    if (s.kind === 'running') {
      await request(conn, 'shutdown', undefined, { timeoutMs: 1000, cancel: 'none' }).catch(() => undefined);
      await conn.sendNotification('exit').catch(() => undefined);
    }
    const graceful = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), s.kind === 'running' ? 2000 : 0).unref())]);
    failPending(conn, new Error(`${this.opts.name} stopped`));
    s.ended();
    conn.dispose();
    // Children of a launcher (npx, a shell) outlive it: stop them too.
    await killAll(graceful ? pids.filter((p) => p !== proc.pid) : pids, 500);
    if (!graceful) await Promise.race([exited, new Promise((r) => setTimeout(r, 1000).unref())]);
  }
}
