/**
 * The bridge side of `shell_command` in the editor's terminal: one foreground command run through
 * the ACP client's terminal methods (https://agentclientprotocol.com/protocol/terminals:
 * `terminal/create`, `wait_for_exit`, `kill`, `output`, `release`). The ACP façade hands it a
 * `TerminalClient` over its connection and offers the result as `FrontEnd.terminal`. Invariants:
 * - the returned promise always settles, and never rejects: a failure is `error` in the result;
 * - a terminal that was created is always released, whatever happened (and one created after the
 *   call gave up waiting for it is released when it arrives);
 * - at the timeout or on abort the command is killed before its output is read (`timedOut` /
 *   `aborted`), as the ACP docs' timeout recipe does;
 * - once the command ended or was stopped, each further request waits at most FOLLOW_UP_MS, so an
 *   editor that stops answering cannot hold the tool call (or the turn) forever.
 */
import type { CreateTerminalRequest, TerminalOutputResponse, WaitForTerminalExitResponse } from '@agentclientprotocol/sdk';
import type { TerminalRunRequest, TerminalRunResult } from '../../shapes/tool.js';

/**
 * The ACP terminal calls this helper needs, one per method. The SDK's `AgentContext.createTerminal`
 * gives a `TerminalHandle` whose `id`, `waitForExit`, `currentOutput`, `kill` and `release` are
 * these (see `sdkTerminalClient`).
 */
export interface TerminalClient {
  createTerminal(params: CreateTerminalRequest): Promise<{ id: string }>;
  output(terminalId: string): Promise<TerminalOutputResponse>;
  waitForExit(terminalId: string): Promise<WaitForTerminalExitResponse>;
  kill(terminalId: string): Promise<unknown>;
  release(terminalId: string): Promise<unknown>;
}

/** The SDK's terminal handle, as the façade gets it from `AgentContext.createTerminal`. */
export interface TerminalHandleLike {
  id: string;
  currentOutput(): Promise<TerminalOutputResponse>;
  waitForExit(): Promise<WaitForTerminalExitResponse>;
  kill(): Promise<unknown>;
  release(): Promise<unknown>;
}

/** How long a request after the command's end (or its stop) may take before the editor is given up on. */
export const FOLLOW_UP_MS = 5_000;

/** A `TerminalClient` over the SDK's handles: `create` is `(params) => ctx.createTerminal(params)`. */
export function sdkTerminalClient(create: (params: CreateTerminalRequest) => Promise<TerminalHandleLike>): TerminalClient {
  const handles = new Map<string, TerminalHandleLike>();
  const handle = (id: string): TerminalHandleLike => {
    const h = handles.get(id);
    if (!h) throw new Error(`unknown terminal ${id}`);
    return h;
  };
  return {
    async createTerminal(params) {
      const h = await create(params);
      handles.set(h.id, h);
      return h;
    },
    output: async (id) => handle(id).currentOutput(),
    waitForExit: async (id) => handle(id).waitForExit(),
    kill: async (id) => handle(id).kill(),
    async release(id) {
      const h = handle(id);
      handles.delete(id);
      return h.release();
    },
  };
}

type Settled<T> = { ok: true; value: T } | { ok: false; error: string };
type Stop = 'timeout' | 'abort';

/**
 * Runs `req` in a new terminal of the client's, for `sessionId`. `onTerminal` is told the terminal's
 * id as soon as it exists, so the façade can show it in the tool call (`{type:'terminal', terminalId}`).
 */
export async function runTerminal(client: TerminalClient, req: TerminalRunRequest & { sessionId: string }, onTerminal?: (terminalId: string) => void): Promise<TerminalRunResult> {
  const result: TerminalRunResult = { output: '', truncated: false, exitCode: null, signal: null, timedOut: false, aborted: false };
  if (req.signal.aborted) return { ...result, aborted: true };
  const params: CreateTerminalRequest = {
    sessionId: req.sessionId,
    command: req.command,
    args: req.args,
    cwd: req.cwd,
    outputByteLimit: req.outputByteLimit,
    ...(req.env ? { env: Object.entries(req.env).map(([name, value]) => ({ name, value })) } : {}),
  };
  const stopper = stopWhen(req.signal, req.timeoutMs);
  try {
    const creating = settle(client.createTerminal(params));
    const first = await Promise.race([creating, stopper.stopped]);
    if (first === 'timeout' || first === 'abort') {
      // Stopped before the editor answered: whatever it creates later is released at once.
      void creating.then((c) => (c.ok ? settle(client.release(c.value.id)) : undefined));
      return stopped(result, first);
    }
    if (!first.ok) return { ...result, error: `the editor could not create a terminal: ${first.error}` };
    const id = first.value?.id;
    if (typeof id !== 'string' || !id) return { ...result, error: 'the editor answered terminal/create without a terminal id' };
    try {
      try {
        onTerminal?.(id);
      } catch {
        // Showing the terminal failed: the command still runs, and the model still gets its result.
      }
      return await runIn(client, id, req.outputByteLimit, stopper.stopped, result);
    } finally {
      await bounded(client.release(id));
    }
  } finally {
    stopper.dispose();
  }
}

async function runIn(client: TerminalClient, id: string, byteLimit: number, stop: Promise<Stop>, base: TerminalRunResult): Promise<TerminalRunResult> {
  const exiting = settle(client.waitForExit(id));
  const first = await Promise.race([exiting, stop]);
  let exit: WaitForTerminalExitResponse | undefined;
  let result = base;
  if (first === 'timeout' || first === 'abort') {
    result = stopped(base, first);
    await bounded(client.kill(id));
    // The exit the kill caused, for its signal; an editor that does not say is not waited for long.
    const after = await withDeadline(exiting);
    if (after.ok) exit = after.value;
  } else if (!first.ok) {
    return { ...base, error: `waiting for the command in the editor's terminal failed: ${first.error}` };
  } else exit = first.value;

  const out = await bounded(client.output(id));
  if (!out.ok) {
    // A stopped command's output is a bonus; a finished one's is what the model asked for.
    if (result.timedOut || result.aborted) return { ...result, exitCode: exit?.exitCode ?? null, signal: exit?.signal ?? null };
    return { ...base, error: `the editor's terminal output could not be read: ${out.error}` };
  }
  // wait_for_exit's answer first; the output's exitStatus fills in what it left out.
  const status = out.value.exitStatus ?? undefined;
  const { text, cut } = keepLastBytes(typeof out.value.output === 'string' ? out.value.output : '', byteLimit);
  return {
    ...result,
    output: text,
    truncated: out.value.truncated === true || cut,
    exitCode: exit?.exitCode ?? status?.exitCode ?? null,
    signal: exit?.signal ?? status?.signal ?? null,
  };
}

function stopped(r: TerminalRunResult, why: Stop): TerminalRunResult {
  return { ...r, timedOut: why === 'timeout', aborted: why === 'abort' };
}

/** Resolves at the timeout or on abort, whichever comes first; `dispose` lets go of both. */
function stopWhen(signal: AbortSignal, timeoutMs: number): { stopped: Promise<Stop>; dispose(): void } {
  let onAbort = (): void => {};
  let timer: NodeJS.Timeout | undefined;
  const stopped = new Promise<Stop>((resolve) => {
    onAbort = () => resolve('abort');
    signal.addEventListener('abort', onAbort, { once: true });
    timer = setTimeout(() => resolve('timeout'), Math.min(Math.max(timeoutMs, 0), 2 ** 31 - 1));
  });
  return {
    stopped,
    dispose() {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    },
  };
}

function settle<T>(p: Promise<T>): Promise<Settled<T>> {
  return p.then(
    (value) => ({ ok: true as const, value }),
    (err: unknown) => ({ ok: false as const, error: err instanceof Error ? err.message : String(err) }),
  );
}

function withDeadline<T>(s: Promise<Settled<T>>): Promise<Settled<T>> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Settled<T>>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, error: `the editor did not answer within ${FOLLOW_UP_MS / 1000} s` }), FOLLOW_UP_MS);
  });
  return Promise.race([s, late]).finally(() => clearTimeout(timer));
}

function bounded<T>(p: Promise<T>): Promise<Settled<T>> {
  return withDeadline(settle(p));
}

/**
 * At most `limit` bytes of the end of `text`, cut at a character boundary (ACP's rule for
 * `outputByteLimit`): the editor should have done it, this holds the budget when it did not.
 */
function keepLastBytes(text: string, limit: number): { text: string; cut: boolean } {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= limit) return { text, cut: false };
  let start = bytes.length - limit;
  // Skip UTF-8 continuation bytes (10xxxxxx) so the kept part starts on a whole character.
  while (start < bytes.length && (bytes[start] & 0xc0) === 0x80) start++;
  return { text: bytes.subarray(start).toString('utf8'), cut: true };
}
