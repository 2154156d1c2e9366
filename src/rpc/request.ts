/**
 * Every outgoing JSON-RPC request patchbay makes (to language servers, to the editor, from
 * `patchbay chat` to its server) goes through `request()`, so each one keeps the house rules
 * (ARCHITECTURE.md "Rules of the house"): it has a deadline, it can be cancelled, and it settles when
 * its connection closes — vscode-jsonrpc itself rejects pending requests on `dispose()` only, not
 * when the peer's stream ends, so without this a request to a dead peer waits forever.
 *
 * Cancellation goes over the wire as `$/cancelRequest` (specs/lsp-3.0.md "Cancellation Support")
 * through vscode-jsonrpc's CancellationToken, which knows the request's id.
 *
 * Tool calls to MCP servers and gateway providers do not come here: they are not requests on a
 * vscode-jsonrpc connection (MCP's go through the SDK, or its transport directly with
 * `notifications/cancelled`; a gateway `call` is its own WebSocket message), and they end in a
 * ToolResult the model reads, never a rejection. shapes/pending-calls.ts keeps their terminal
 * rules (first outcome wins, a late answer is told from an unknown one, one timer for all calls).
 */
import { CancellationTokenSource, type MessageConnection } from 'vscode-jsonrpc';

export interface RequestOptions {
  /** The request fails after this long (the peer is sent `$/cancelRequest` when `cancel` is 'lsp'). */
  timeoutMs: number;
  /** Aborting stops the wait at once (and cancels on the wire when `cancel` is 'lsp'). */
  signal?: AbortSignal;
  /**
   * 'lsp': the peer understands `$/cancelRequest` (LSP and ECA peers do); 'none': it does not, so
   * a deadline or abort only stops our wait.
   */
  cancel: 'lsp' | 'none';
  /** What errors call the request; the method by default. */
  label?: string;
}

/** Why a request ended without the peer's answer. Local only: never sent over the wire. */
export type RequestFailure = 'timeout' | 'cancelled' | 'closed';

export class RequestError extends Error {
  constructor(
    readonly reason: RequestFailure,
    readonly method: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'RequestError';
  }
}

/** setTimeout's ceiling; a longer delay would fire at once. */
const MAX_DELAY_MS = 2 ** 31 - 1;

/** Ends a waiting request: with `error`, or as "connection closed" without one. */
type Settle = (error?: Error) => void;

/** The requests waiting on each connection, so its close settles all of them with one listener. */
const pendingByConnection = new WeakMap<MessageConnection, Set<Settle>>();

function pendingOn(conn: MessageConnection): Set<Settle> {
  let pending = pendingByConnection.get(conn);
  if (pending) return pending;
  const set = new Set<Settle>();
  // One pair of listeners per connection, for its whole life (the connection owns them).
  const closeAll = () => {
    for (const settle of [...set]) settle();
  };
  conn.onClose(closeAll);
  conn.onDispose(closeAll);
  pendingByConnection.set(conn, set);
  return set;
}

/** How many requests are waiting on `conn` (for tests and diagnostics). */
export function pendingRequests(conn: MessageConnection): number {
  return pendingByConnection.get(conn)?.size ?? 0;
}

/**
 * Rejects every request still waiting on `conn` with `error`: for an owner that knows better than
 * "connection closed" why the peer is gone (a language server that crashed, with its exit code).
 */
export function failPending(conn: MessageConnection, error: Error): void {
  for (const settle of [...(pendingByConnection.get(conn) ?? [])]) settle(error);
}

/** One request with a deadline, cancellation and settle-on-close; resolves with the peer's result. */
export function request<R = unknown>(conn: MessageConnection, method: string, params: unknown, opts: RequestOptions): Promise<R> {
  const label = opts.label ?? method;
  const { signal } = opts;
  if (signal?.aborted) return Promise.reject(abortError(label, method, signal));
  return new Promise<R>((resolve, reject) => {
    const pending = pendingOn(conn);
    const cts = opts.cancel === 'lsp' ? new CancellationTokenSource() : undefined;
    let done = false;
    const finish = (wireCancel: boolean, f: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      pending.delete(onClosed);
      if (wireCancel) cts?.cancel(); // sends $/cancelRequest with this request's id
      cts?.dispose();
      f();
    };
    const onClosed: Settle = (error) => finish(false, () => reject(error ?? new RequestError('closed', method, `${label} failed: connection closed`)));
    const onAbort = () => finish(true, () => reject(abortError(label, method, signal!)));
    const timer = setTimeout(
      () => finish(true, () => reject(new RequestError('timeout', method, `${label} timed out after ${duration(opts.timeoutMs)}`))),
      Math.min(Math.max(0, opts.timeoutMs), MAX_DELAY_MS),
    );
    timer.unref();
    signal?.addEventListener('abort', onAbort, { once: true });
    pending.add(onClosed);
    let answer: Promise<R>;
    try {
      // No params argument at all when there are none: vscode-jsonrpc would send `[null]` for undefined.
      const args: unknown[] = params === undefined ? [] : [params];
      if (cts) args.push(cts.token);
      answer = (conn.sendRequest as (m: string, ...a: unknown[]) => Promise<R>)(method, ...args);
    } catch (e) {
      // Thrown at once when the connection is already closed, disposed or not listening.
      return onClosed(new RequestError('closed', method, `${label} failed: ${errorText(e)}`, { cause: e }));
    }
    answer.then(
      (r) => finish(false, () => resolve(r)),
      (e: unknown) => finish(false, () => reject(e instanceof Error ? e : new Error(`${label} failed: ${errorText(e)}`))),
    );
  });
}

/** "cancelled" for a plain abort; "aborted: <why>" when the abort gave a reason. */
function abortError(label: string, method: string, signal: AbortSignal): RequestError {
  const reason: unknown = signal.reason;
  const why = reason instanceof Error && reason.name !== 'AbortError' ? reason.message : typeof reason === 'string' ? reason : undefined;
  return new RequestError('cancelled', method, why ? `${label} aborted: ${why}` : `${label} cancelled`, { cause: reason });
}

/** "200 ms", or "30 s" for whole seconds: how people write a timeout. */
function duration(ms: number): string {
  return ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

function errorText(e: unknown): string {
  if (e instanceof Error) return e.message;
  const m = (e as { message?: unknown } | null)?.message;
  return typeof m === 'string' ? m : String(e);
}
