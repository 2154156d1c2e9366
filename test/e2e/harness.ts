/**
 * Drives the built `patchbay server` over real stdio with hand-framed messages, so tests
 * see exactly the bytes an editor would (and can send malformed ones); runs the other
 * commands (`patchbay chat`, `doctor`, …) as plain processes with runPatchbay.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach } from 'vitest';
import type { FakeLlm } from '../fixtures/fake-llm.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { FramedProcess, initializeParams, type Msg } from '../support/framed.js';
import { ECA, type EcaMethodType } from '../../src/protocol/eca/methods.js';

/** The ECA method table, for tests to name methods by (`p.request(ECA.chatPrompt, …)`). */
export { ECA };

export const BIN = resolve(import.meta.dirname, '../../bin/patchbay');

export type { Msg };

export function tempDir(prefix = 'pb-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * Temp dirs removed after each test: `const scratch = useTempDirs()`, then `scratch(tempDir())`
 * returns the dir. Call it before other hooks are registered so the removal runs last (after
 * hooks run in reverse), once every process is stopped.
 */
export function useTempDirs(): (dir: string) => string {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return (dir) => {
    dirs.push(dir);
    return dir;
  };
}

/** A loopback port nothing listens on: bound once to learn it is free, then closed. */
export async function refusedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** PATCHBAY_CONFIG for a patchbay process: `config` with a free gateway port (tests run many at once). */
export function cliConfig(config: Record<string, unknown> = {}): string {
  return JSON.stringify({ ...config, gateway: { port: 0 } });
}

/**
 * PATCHBAY_CONFIG for `patchbay chat` against the fake LLM at `url`: provider `fake` with
 * `models`, fake/m1 the default, no titles, no retries, a free gateway port; then `extra`.
 */
export function fakeChatConfig(url: string, extra: Record<string, unknown> = {}, models: string[] = ['m1']): string {
  return cliConfig({
    providers: { fake: { api: 'openai-chat', url: `${url}/v1`, key: 'x', models: Object.fromEntries(models.map((m) => [m, {}])) } },
    defaultModel: 'fake/m1',
    chat: { generateTitles: false, maxRetries: 0 },
    ...extra,
  });
}

/**
 * The whole environment of a patchbay process living in the temp `home` (nothing is inherited
 * but PATH): its config under home/.config, its data under home/.patchbay, no built-in local
 * model (it would be fetched from the network) and a free gateway port. `extra` is laid over
 * it; a key given as undefined is left unset.
 */
export function cliEnv(home: string, extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH ?? '',
    // The run's temp root (test/support/temp-root.ts): what patchbay's children put in the temp
    // dir (typescript-language-server's cancellation-pipe folders) goes when the run ends.
    TMPDIR: process.env.TMPDIR,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    PATCHBAY_HOME: join(home, '.patchbay'),
    PATCHBAY_LOCAL_MODEL: 'off',
    // An asked-for level: stderr shows the INFO lines tests read (the default keeps it to errors, stderr-quiet.test.ts).
    PATCHBAY_LOG_LEVEL: 'info',
    PATCHBAY_CONFIG: cliConfig(),
    ...extra,
  };
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

export interface CliRunOptions {
  /** Default: the home. */
  cwd?: string;
  /** Default: a fresh temp dir, left in place (pass one from useTempDirs to have it removed). */
  home?: string;
  /** Laid over cliEnv(home) (undefined unsets a key). */
  env?: Record<string, string | undefined>;
  /** Written to stdin, which is then closed (default ''); null: no stdin at all (/dev/null). */
  stdin?: string | null;
  /** SIGKILL and reject after this long (default 20 s); 0: no deadline. */
  timeoutMs?: number;
  /** Resolve on the process's 'exit' (default) or on 'close' (its output streams closed too). */
  until?: 'exit' | 'close';
  /** The Node that runs it (default: the one running the tests). */
  node?: string;
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout and stderr interleaved as they arrived. */
  output: string;
}

/** Runs the built `patchbay ...args` as a process (see CliRunOptions) and collects its output. */
export function runPatchbay(args: string[], opts: CliRunOptions = {}): Promise<CliRun> {
  const home = opts.home ?? tempDir('pb-home-');
  const stdin = opts.stdin === undefined ? '' : opts.stdin;
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const child = spawn(opts.node ?? process.execPath, [BIN, ...args], {
    cwd: opts.cwd ?? home,
    env: cliEnv(home, opts.env),
    stdio: [stdin === null ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let output = '';
  child.stdout!.on('data', (d: Buffer) => ((stdout += d.toString()), (output += d.toString())));
  child.stderr!.on('data', (d: Buffer) => ((stderr += d.toString()), (output += d.toString())));
  if (stdin !== null) child.stdin?.end(stdin);
  return new Promise((resolve, reject) => {
    const timer =
      timeoutMs > 0
        ? setTimeout(() => {
            child.kill('SIGKILL');
            reject(new Error(`patchbay ${args.join(' ')} did not exit in ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
          }, timeoutMs)
        : undefined;
    child.on(opts.until ?? 'exit', (code: number | null) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, output });
    });
  });
}

export function fakeProviderConfig(url: string, api = 'openai-chat', extra: Record<string, unknown> = {}): Record<string, unknown> {
  const base = api === 'anthropic' || api === 'ollama' ? url : `${url}/v1`;
  return {
    providers: { fake: { api, url: base, key: 'test-key', models: { m1: { limit: { context: 100_000, output: 100 }, cost: { input: 1, output: 2 } } } } },
    defaultModel: 'fake/m1',
    chat: { generateTitles: false, maxRetries: 3 },
    // Commands run in the OS sandbox (bubblewrap) as they do by default, but what the approval
    // rules would ask about still asks: tests of the rules see them as written. The default
    // (sandboxed commands run unasked) is test/e2e/sandbox.test.ts's; `sandbox` in `extra` replaces this.
    sandbox: { autoAllow: false },
    ...extra,
  };
}

export class EcaProc extends FramedProcess {
  readonly messages: Msg[] = [];
  private waiters: Array<{ pred: (m: Msg) => boolean; resolve: (m: Msg) => void; from: number }> = [];

  constructor(opts: { home: string; config?: Record<string, unknown>; env?: Record<string, string | undefined>; args?: string[] }) {
    // No built-in local model and no fixed gateway port unless a test asks for one (cliEnv).
    super([BIN, 'server', ...(opts.args ?? [])], cliEnv(opts.home, { PATCHBAY_CONFIG: JSON.stringify({ gateway: { port: 0 }, ...opts.config }), ...opts.env }));
  }

  protected onMessage(msg: Msg): void {
    this.messages.push(msg);
    // Answer server → client requests the way a plain editor would.
    if (msg.method === ECA.editorGetDiagnostics.method && msg.id !== undefined) this.onServerRequest?.(msg);
    for (const w of [...this.waiters]) {
      if (w.pred(msg)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(msg);
      }
    }
  }

  onServerRequest?: (m: Msg) => void;

  /** A table entry, or a bare string for what is not in the table (unknown methods, bad names). */
  async request(entry: EcaMethodType | string, params?: unknown): Promise<Msg> {
    const method = typeof entry === 'string' ? entry : entry.method;
    const id = this.nextId++;
    const p = this.waitFor((m) => m.id === id && m.method === undefined, `response to ${method}`);
    this.send({ id, method, ...(params === undefined ? {} : { params }) });
    return p;
  }

  override notify(entry: EcaMethodType | string, params?: unknown): void {
    super.notify(typeof entry === 'string' ? entry : entry.method, params);
  }

  /** Resolves with the first message (already received or future) matching pred. */
  waitFor(pred: (m: Msg) => boolean, what = 'message', timeoutMs = 15_000, from = 0): Promise<Msg> {
    const seen = this.messages.slice(from).find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`timed out waiting for ${what}; stderr:\n${this.stderr.slice(-3000)}`)), timeoutMs);
      this.waiters.push({ pred, resolve: (m) => (clearTimeout(t), resolve(m)), from });
    });
  }

  contents(chatId: string): Array<{ role: string; content: any }> {
    return this.messages.filter((m) => m.method === ECA.chatContentReceived.method && m.params.chatId === chatId).map((m) => m.params);
  }

  text(chatId: string, role = 'assistant'): string {
    return this.contents(chatId)
      .filter((c) => c.role === role && c.content.type === 'text')
      .map((c) => c.content.text)
      .join('');
  }

  /** Waits for the end of the current turn of a chat (the Nth `progress finished`). */
  turnDone(chatId: string, nth = 1, timeoutMs = 15_000): Promise<Msg> {
    let count = 0;
    return this.waitFor(
      (m) => m.method === ECA.chatContentReceived.method && m.params.chatId === chatId && m.params.content.type === 'progress' && m.params.content.state === 'finished' && ++count === nth,
      `turn ${nth} of ${chatId} to finish`,
      timeoutMs,
    );
  }

  async initialize(root: string, extra: Record<string, unknown> = {}): Promise<Msg> {
    const res = await this.request(ECA.initialize, { ...initializeParams(root, 'test'), ...extra });
    this.notify(ECA.initialized, {});
    return res;
  }

  /** shutdown (given 2 s) + exit, SIGKILL after 3 s more. */
  stop(): Promise<number | null> {
    return this.stopWith(() => Promise.race([this.request(ECA.shutdown), new Promise((r) => setTimeout(r, 2000))]), 3000);
  }
}

/**
 * Stops, after each test, every EcaProc handed to the returned `track` (which returns it),
 * then calls `afterStop`.
 */
export function useEcaProcs(afterStop?: () => void): (p: EcaProc) => EcaProc {
  let procs: EcaProc[] = [];
  afterEach(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    procs = [];
    afterStop?.();
  });
  return (p) => {
    procs.push(p);
    return p;
  };
}

/**
 * One fake LLM for the file (see useFakeLlm) and EcaProcs tracked by `track`: after each
 * test the procs are stopped, then the fake LLM is reset.
 */
export function useFakeLlmSuite(): { llm: () => FakeLlm; track: (p: EcaProc) => EcaProc } {
  const llm = useFakeLlm({ reset: 'never' });
  const track = useEcaProcs(() => llm().reset());
  return { llm, track };
}

/** A fresh temp directory holding `files` (relative path → content). */
export function workspace(files: Record<string, string> = {}, prefix = 'pb-ws-'): string {
  const root = tempDir(prefix);
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), content);
  }
  return root;
}
