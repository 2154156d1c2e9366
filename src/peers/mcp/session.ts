/**
 * One live, initialized MCP connection: the server's lists (tools, resources, templates, prompts),
 * its notifications, and the calls the rest of patchbay makes through it. A session never
 * reconnects; server.ts replaces it with a new one.
 */
import { within } from '../../util/deadline.js';
import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  ProgressNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type GetPromptResult,
  type JSONRPCMessage,
  type LoggingLevel,
  type Progress,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import type { AskUser } from '../../shapes/ask.js';
import { PendingCalls } from '../../shapes/pending-calls.js';
import { textResult, type ToolContext, type ToolResult } from '../../shapes/tool.js';
import { errorMessage, type Logger, type LogLevel } from '../../util/log.js';
import { renderResource, toToolResult } from './adapt.js';
import type { ServerConfig } from './config.js';
import { callToolResultSchema, parseCallToolResult } from './fast-parse.js';
import { connect, oneLine, type Connection, type ConnectOptions } from './transport.js';
import type { McpOAuthClient } from './oauth-provider.js';
import { RunningCalls, type RunningCall } from './running-calls.js';
import { StderrTail } from './stderr-tail.js';
import { LogBudget } from '../../util/log-budget.js';

export type ListKind = 'tools' | 'resources' | 'prompts';

export interface SessionOptions {
  name: string;
  config: ServerConfig;
  env: NodeJS.ProcessEnv;
  roots: () => string[];
  timeoutMs: number;
  /** For connecting only, when longer than timeoutMs (a sign-in is under way). */
  connectTimeoutMs?: number;
  logLevel: LogLevel;
  log: Logger;
  /** Aborts the attempt to connect (stop() during start). */
  signal: AbortSignal;
  /** The connection ended without close() (the process died, the stream broke). */
  onClosed(reason: string): void;
  /** A list was refreshed after `notifications/<kind>/list_changed`. */
  onListChanged(kind: ListKind): void;
  /** The front end's way to ask the user; without it, elicitation is not declared. */
  ask?: AskUser;
  /** A remote server's OAuth client. */
  oauth?: McpOAuthClient;
  /** A stdio server runs in the OS sandbox: its command becomes this (transport.ts). */
  wrap?: ConnectOptions['wrap'];
}

/** patchbay level → MCP level (https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/logging). */
const toMcpLevel: Record<LogLevel, LoggingLevel> = { error: 'error', warn: 'warning', info: 'info', debug: 'debug' };
const fromMcpLevel: Record<LoggingLevel, LogLevel> = {
  debug: 'debug',
  info: 'info',
  notice: 'info',
  warning: 'warn',
  error: 'error',
  critical: 'error',
  alert: 'error',
  emergency: 'error',
};

const cancelled = (label: string): ToolResult => textResult(`${label}: cancelled`, true);

function progressText(label: string, p: Progress): string {
  return `${label}: ${p.progress}${p.total !== undefined ? `/${p.total}` : ''}${p.message ? ` ${p.message}` : ''}`;
}

/** setTimeout's longest delay: the SDK's own call timeout, made moot by ours (callThroughSdk). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A server that keeps answering with a cursor must not keep us paging forever. */
const MAX_PAGES = 100;

export async function listAll<T>(page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string }>): Promise<T[]> {
  const out: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const r = await page(cursor);
    out.push(...r.items);
    if (!r.nextCursor || seen.has(r.nextCursor)) break;
    seen.add(r.nextCursor);
    cursor = r.nextCursor;
  }
  return out;
}

export class McpSession {
  tools: McpTool[] = [];
  resources: Resource[] = [];
  templates: ResourceTemplate[] = [];
  prompts: Prompt[] = [];
  instructions: string | undefined;
  private conn!: Connection;
  private closing = false;
  /** Set once the server broke the protocol; its later answers are not used. */
  private broken: string | undefined;
  private readonly stderr: StderrTail;
  /** Budgets for the server's log notifications and its stderr lines: a flood must not fill server.log. */
  private readonly logs: LogBudget;
  private readonly stderrLogs: LogBudget;
  private readonly subscribed = new Set<string>();
  private readonly updated = new Set<string>();
  /** Per list: the newest refresh started and the newest applied, so a slow old answer never wins. */
  private readonly started: Record<ListKind, number> = { tools: 0, resources: 0, prompts: 0 };
  private readonly applied: Record<ListKind, number> = { tools: 0, resources: 0, prompts: 0 };
  /** Tools callDirect may call: no output schema to validate, no task support. */
  private plainTools = new Set<string>();
  private callSeq = 0;
  /** Every tools/call in flight, for `elicitation/create` to find its chat. */
  private readonly running = new RunningCalls();
  /** callDirect's calls in flight. */
  private readonly calls = new PendingCalls<{ label: string; progress: ToolContext['progress'] }>({
    ended: (tool, reason, _ms, call) => {
      const label = call?.label ?? `${this.opts.name}__${tool}`;
      return reason === 'timeout' ? this.timeoutResult(label) : cancelled(label);
    },
  });

  private constructor(private readonly opts: SessionOptions) {
    this.stderr = new StderrTail(opts.config.kind === 'stdio' ? Object.values(opts.config.env) : []);
    const sink = (level: LogLevel, line: string) => opts.log[level](line);
    this.logs = new LogBudget(opts.name, sink);
    // Its own budget, so a server's last words on stderr are not drowned by its log notifications.
    this.stderrLogs = new LogBudget(`${opts.name} (stderr)`, sink);
  }

  static async open(opts: SessionOptions): Promise<McpSession> {
    const s = new McpSession(opts);
    s.conn = await connect(opts.config, {
      makeClient: () => s.makeClient(),
      env: opts.env,
      cwd: opts.roots()[0],
      timeoutMs: opts.connectTimeoutMs ?? opts.timeoutMs,
      signal: opts.signal,
      log: opts.log,
      onStderr: (line) => {
        if (line.trim()) s.stderrLogs.log('info', () => `stderr: ${s.stderr.scrub(line)}`);
      },
      stderrTail: s.stderr,
      ...(opts.oauth ? { oauth: opts.oauth } : {}),
      ...(opts.wrap ? { wrap: opts.wrap } : {}),
    });
    s.instructions = s.conn.client.getInstructions();
    // callDirect's answers are taken before the SDK sees them; everything else is the SDK's.
    const transport = s.conn.client.transport;
    const sdk = transport?.onmessage;
    if (transport && sdk) transport.onmessage = (m, extra) => void (s.takeMessage(m) || sdk.call(transport, m, extra));
    const caps = s.conn.client.getServerCapabilities() ?? {};
    if (caps.logging) {
      await s.conn.client.setLoggingLevel(toMcpLevel[opts.logLevel], { timeout: opts.timeoutMs }).catch((e: unknown) => opts.log.warn(`logging/setLevel: ${errorMessage(e)}`));
    }
    await Promise.all((['tools', 'resources', 'prompts'] as const).map((k) => s.refresh(k)));
    if (opts.signal.aborted) {
      await s.close();
      throw new Error('start cancelled');
    }
    return s;
  }

  get pid(): number | undefined {
    return this.conn.pid;
  }

  get transport(): Connection['transport'] {
    return this.conn.transport;
  }

  private get client(): Client {
    return this.conn.client;
  }

  private makeClient(): Client {
    const { log } = this.opts;
    const client = new Client(
      { name: 'patchbay', version: '0.1.0' },
      // Honest capabilities: roots; form-mode elicitation only when someone can be asked, so
      // servers fall back otherwise (spec: elicitation is declared by clients that support it).
      // No sampling, no URL-mode elicitation.
      { capabilities: { roots: { listChanged: true }, ...(this.opts.ask ? { elicitation: { form: {} } } : {}) } },
    );
    client.onerror = (e) => {
      const msg = oneLine(errorMessage(e));
      // Before initialize completes, errors reach us through the failed connect instead.
      if (!this.conn) return log.debug(`while connecting: ${msg}`);
      // The SDK handles a response at once but notifications a microtask later, so progress sent
      // right before the result arrives "late"; harmless.
      if (msg.startsWith('Received a progress notification for an unknown token')) return log.debug(msg);
      log.warn(`protocol error: ${msg}`);
      // stdout of a stdio server carries MCP messages only (spec "Transports"): anything else
      // means it is broken, so it is marked failed and restarted; calls in flight end with errors.
      if (this.conn?.transport === 'stdio' && (e instanceof SyntaxError || e.name === 'ZodError') && !this.broken) {
        this.broken = `wrote something other than MCP messages to stdout: ${msg.slice(0, 200)}`;
        this.opts.onClosed(this.broken);
      }
    };
    client.onclose = () => {
      if (this.conn?.client === client) this.calls.failAll((tool, call) => this.closedDuringCall(call?.label ?? `${this.opts.name}__${tool}`));
      if (this.closing || this.conn?.client !== client) return;
      const tail = this.stderr.text();
      this.opts.onClosed(`connection closed${tail ? `; stderr: ${tail}` : ''}`);
    };
    client.setRequestHandler(ListRootsRequestSchema, () => ({
      roots: this.opts.roots().map((r) => ({ uri: pathToFileURL(r).href, name: basename(r) })),
    }));
    const ask = this.opts.ask;
    if (ask) client.setRequestHandler(ElicitRequestSchema, (req, extra) => this.running.elicit(this.opts.name, req.params, ask, extra.signal, log));
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      const { level, logger, data } = n.params;
      this.logs.log(fromMcpLevel[level] ?? 'info', () => `${logger ? `${logger}: ` : ''}${typeof data === 'string' ? data : JSON.stringify(data)}`);
    });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.refreshAndNotify('tools'));
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => this.refreshAndNotify('prompts'));
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => this.refreshAndNotify('resources'));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      log.debug(`resource updated: ${n.params.uri}`);
      this.updated.add(n.params.uri);
    });
    return client;
  }

  private async refreshAndNotify(kind: ListKind): Promise<void> {
    if (await this.refresh(kind)) this.opts.onListChanged(kind);
  }

  /** Fetches every page of one list; false when a newer refresh already won or the fetch failed. */
  private async refresh(kind: ListKind): Promise<boolean> {
    // A list_changed during initialize: the listing right after connect covers it.
    if (!this.conn) return false;
    const caps = this.client.getServerCapabilities() ?? {};
    if (!caps[kind]) return false;
    const mine = ++this.started[kind];
    const opt = { timeout: this.opts.timeoutMs };
    const c = this.client;
    try {
      if (kind === 'tools') {
        const tools = await listAll((cursor) => c.listTools({ cursor }, opt).then((r) => ({ items: r.tools, nextCursor: r.nextCursor })));
        if (mine < this.applied.tools) return false;
        this.tools = tools;
        this.plainTools = new Set(tools.filter((t) => !t.outputSchema && (t.execution?.taskSupport ?? 'forbidden') === 'forbidden').map((t) => t.name));
      } else if (kind === 'prompts') {
        const prompts = await listAll((cursor) => c.listPrompts({ cursor }, opt).then((r) => ({ items: r.prompts, nextCursor: r.nextCursor })));
        if (mine < this.applied.prompts) return false;
        this.prompts = prompts;
      } else {
        const [resources, templates] = await Promise.all([
          listAll((cursor) => c.listResources({ cursor }, opt).then((r) => ({ items: r.resources, nextCursor: r.nextCursor }))),
          listAll((cursor) => c.listResourceTemplates({ cursor }, opt).then((r) => ({ items: r.resourceTemplates, nextCursor: r.nextCursor }))).catch(
            (e: unknown) => (this.opts.log.debug(`resources/templates/list: ${errorMessage(e)}`), []),
          ),
        ]);
        if (mine < this.applied.resources) return false;
        this.resources = resources;
        this.templates = templates;
      }
      this.applied[kind] = mine;
      return true;
    } catch (e) {
      if (!this.closing) this.opts.log.warn(`${kind} list failed: ${errorMessage(e)}`);
      return false;
    }
  }

  /**
   * `tools/call`. Never throws: timeouts, cancellation, a dead server all become error results.
   *
   * A tool without an output schema or task support (nearly all of them) is called on a short
   * path of our own over the SDK's transport (callDirect); the rest go through the SDK's
   * `callTool`, which validates structured content and knows tasks.
   */
  callTool(tool: string, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const label = `${this.opts.name}__${tool}`;
    if (ctx.signal.aborted) return Promise.resolve(cancelled(label));
    if (this.broken) return Promise.resolve(textResult(`${label}: the MCP server "${this.opts.name}" is broken (${this.broken}); it is being restarted`, true));
    const run = this.running.add(ctx);
    const call = this.plainTools.has(tool) ? this.callDirect(tool, label, args, ctx, run) : this.callThroughSdk(tool, label, args, ctx, run);
    return call.finally(() => run.end());
  }

  private async callThroughSdk(tool: string, label: string, args: Record<string, unknown>, ctx: ToolContext, run: RunningCall): Promise<ToolResult> {
    // Our own controller: the SDK never removes its abort listener, so a long-lived chat signal
    // would otherwise send notifications/cancelled for calls that already finished.
    const ac = new AbortController();
    const onAbort = () => ac.abort(ctx.signal.reason);
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    // Our own timer rather than the SDK's, so an elicitation can hold it while the user answers.
    const timeoutMs = this.opts.timeoutMs;
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    // Set once the call has settled: the call's end (callTool's finally) withdraws an open
    // question, whose release would otherwise arm a fresh timer that outlives the call and then
    // aborts `ac`, making the SDK send notifications/cancelled for a finished request.
    let finished = false;
    const arm = () => {
      clearTimeout(timer);
      if (finished) return;
      timer = setTimeout(() => {
        timedOut = true;
        ac.abort(new McpError(ErrorCode.RequestTimeout, 'Request timed out', { timeout: timeoutMs }));
      }, timeoutMs);
    };
    arm();
    let holds = 0;
    run.hold = () => {
      if (holds++ === 0) clearTimeout(timer);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        if (--holds === 0 && !ac.signal.aborted) arm();
      };
    };
    try {
      // The SDK only calls safeParse on the schema; ours is CallToolResultSchema with a fast path.
      const r = await this.client.callTool({ name: tool, arguments: args }, callToolResultSchema as unknown as typeof CallToolResultSchema, {
        signal: ac.signal,
        // Ours above governs; the SDK's would fire while the user is being asked.
        timeout: MAX_TIMER_MS,
        onprogress: (p) => ctx.progress?.(progressText(label, p)),
      });
      return this.toResult(label, r);
    } catch (e) {
      if (ctx.signal.aborted) return cancelled(label);
      if (timedOut || (e instanceof McpError && e.code === ErrorCode.RequestTimeout)) {
        this.restartAfterTimeout(tool);
        return this.timeoutResult(label);
      }
      if (e instanceof McpError && e.code === ErrorCode.ConnectionClosed) return this.closedDuringCall(label);
      return textResult(`${label} failed: ${errorMessage(e)}`, true);
    } finally {
      finished = true;
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * `tools/call` without the SDK's request machinery, which costs more than the rest of a call
   * through patchbay (bench/mcp.ts): string ids of our own (the SDK's are numbers), one timer and
   * one abort listener for all calls (PendingCalls), and the result checked by the same schema.
   * Cancellation and timeouts send `notifications/cancelled` as the SDK would.
   */
  private callDirect(tool: string, label: string, args: Record<string, unknown>, ctx: ToolContext, run: RunningCall): Promise<ToolResult> {
    const id = `patchbay-${++this.callSeq}`;
    const transport = this.client.transport;
    if (!transport) return Promise.resolve(textResult(`${label} failed: the MCP server "${this.opts.name}" is not connected`, true));
    const result = this.calls.start({
      id,
      tool,
      timeoutMs: this.opts.timeoutMs,
      signal: ctx.signal,
      cancel: (reason) => {
        const why = reason === 'timeout' ? `timed out after ${this.opts.timeoutMs / 1000} s` : String(ctx.signal.reason ?? 'cancelled');
        transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: why } }).catch(() => {});
        if (reason === 'timeout') this.restartAfterTimeout(tool);
      },
      data: { label, progress: ctx.progress },
    });
    run.hold = () => this.calls.hold(id);
    transport
      .send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: args, _meta: { progressToken: id } } })
      .catch((e: unknown) => this.calls.finish(id, textResult(`${label} failed: ${errorMessage(e)}`, true)));
    return result;
  }

  /**
   * The transport's messages for callDirect's calls; false for everything the SDK handles. It
   * runs inside the transport's message handler, so nothing here may throw.
   */
  private takeMessage(m: JSONRPCMessage): boolean {
    if ('id' in m && typeof m.id === 'string' && ('result' in m || 'error' in m)) {
      const call = this.calls.data(m.id);
      if (!call) {
        if (!m.id.startsWith('patchbay-')) return false;
        // Late (the call was cancelled or timed out) or repeated: expected, harmless. Never sent: the server's mistake.
        if (this.calls.wasSettled(m.id)) this.opts.log.debug(`ignored a late or repeated answer to tools/call ${m.id}`);
        else this.opts.log.warn(`ignored an answer to tools/call ${m.id}, which patchbay never sent`);
        return true;
      }
      let result: ToolResult;
      try {
        result = 'error' in m ? textResult(`${call.label} failed: ${errorMessage(new McpError(m.error.code, m.error.message, m.error.data))}`, true) : this.checkResult(call.label, m.result);
      } catch (e) {
        result = textResult(`${call.label} failed: ${errorMessage(e)}`, true);
      }
      this.calls.finish(m.id, result);
      return true;
    }
    if ('method' in m && m.method === 'notifications/progress' && !('id' in m)) {
      const token = (m.params as { progressToken?: unknown } | undefined)?.progressToken;
      const call = typeof token === 'string' ? this.calls.data(token) : undefined;
      if (!call) return false;
      const n = ProgressNotificationSchema.safeParse(m);
      if (!n.success) this.opts.log.warn(`ignored a malformed progress notification: ${oneLine(n.error.message)}`);
      else {
        try {
          call.progress?.(progressText(call.label, n.data.params));
        } catch (e) {
          this.opts.log.warn(`showing progress of ${call.label}: ${errorMessage(e)}`);
        }
      }
      return true;
    }
    return false;
  }

  private checkResult(label: string, result: unknown): ToolResult {
    const r = parseCallToolResult(result);
    return r.success ? this.toResult(label, r.data) : textResult(`${label} failed: ${errorMessage(r.error)}`, true);
  }

  private toResult(label: string, r: CallToolResult | { toolResult?: unknown }): ToolResult {
    // Whatever a server that broke the protocol meanwhile says is not trusted.
    if (this.broken) return textResult(`${label}: the MCP server "${this.opts.name}" ${this.broken}; it is being restarted`, true);
    if ('content' in r) return toToolResult(r as CallToolResult);
    return textResult(JSON.stringify((r as { toolResult?: unknown }).toolResult ?? r));
  }

  /** A server that lets a call time out may be wedged: restarted (after the cancellation went out). */
  private restartAfterTimeout(tool: string): void {
    setImmediate(() => this.opts.onClosed(`did not answer tools/call ${tool} within ${this.opts.timeoutMs / 1000} s`));
  }

  private timeoutResult(label: string): ToolResult {
    return textResult(`${label}: timed out after ${this.opts.timeoutMs / 1000} s (the server was sent notifications/cancelled and will be restarted)`, true);
  }

  private closedDuringCall(label: string): ToolResult {
    return textResult(`${label}: the MCP server "${this.opts.name}" closed the connection during the call (it may have crashed)`, true);
  }

  /** `resources/read`; subscribes to the uri once when the server can (spec "Subscriptions"). */
  async readResource(uri: string, signal: AbortSignal): Promise<string> {
    // Cleared before reading: an update that arrives while we read marks it again.
    this.updated.delete(uri);
    const r = await this.client.readResource({ uri }, { signal, timeout: this.opts.timeoutMs });
    if (this.client.getServerCapabilities()?.resources?.subscribe && !this.subscribed.has(uri)) {
      this.subscribed.add(uri);
      await this.client.subscribeResource({ uri }, { timeout: this.opts.timeoutMs }).catch((e: unknown) => {
        this.subscribed.delete(uri);
        this.opts.log.warn(`resources/subscribe ${uri}: ${errorMessage(e)}`);
      });
    }
    return renderResource(r);
  }

  isUpdated(uri: string): boolean {
    return this.updated.has(uri);
  }

  getPrompt(name: string, args: Record<string, string>, signal: AbortSignal): Promise<GetPromptResult> {
    return this.client.getPrompt({ name, arguments: args }, { signal, timeout: this.opts.timeoutMs });
  }

  /** `notifications/roots/list_changed`, after the workspace folders changed. */
  rootsChanged(): Promise<void> {
    // Over HTTP a notification is a POST the server may never answer: wait for it no longer than a request.
    const sent = this.client.sendRootsListChanged().catch((e: unknown) => this.opts.log.debug(`roots/list_changed: ${errorMessage(e)}`));
    return within(sent, this.opts.timeoutMs, () => this.opts.log.warn(`roots/list_changed: no answer after ${this.opts.timeoutMs} ms; going on`));
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    await this.conn.close();
    this.logs.flush();
    this.stderrLogs.flush();
  }
}
