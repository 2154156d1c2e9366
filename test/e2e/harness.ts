/**
 * Drives the built `patchbay server` over real stdio with hand-framed messages, so tests
 * see exactly the bytes an editor would (and can send malformed ones).
 */
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach } from 'vitest';
import type { FakeLlm } from '../fixtures/fake-llm.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { FramedProcess, initializeParams, type Msg } from '../support/framed.js';

export const BIN = resolve(import.meta.dirname, '../../bin/patchbay');

export type { Msg };

export function tempDir(prefix = 'pb-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function fakeProviderConfig(url: string, api = 'openai-chat', extra: Record<string, unknown> = {}): Record<string, unknown> {
  const base = api === 'anthropic' || api === 'ollama' ? url : `${url}/v1`;
  return {
    providers: { fake: { api, url: base, key: 'test-key', models: { m1: { limit: { context: 1000, output: 100 }, cost: { input: 1, output: 2 } } } } },
    defaultModel: 'fake/m1',
    chat: { generateTitles: false, maxRetries: 3 },
    ...extra,
  };
}

export class EcaProc extends FramedProcess {
  readonly messages: Msg[] = [];
  private waiters: Array<{ pred: (m: Msg) => boolean; resolve: (m: Msg) => void; from: number }> = [];

  constructor(opts: { home: string; config?: Record<string, unknown>; env?: Record<string, string>; args?: string[] }) {
    super([BIN, 'server', ...(opts.args ?? [])], {
      PATH: process.env.PATH ?? '',
      HOME: opts.home,
      XDG_CONFIG_HOME: join(opts.home, '.config'),
      PATCHBAY_HOME: join(opts.home, '.patchbay'),
      // No built-in local model (it would be fetched from the network) unless a test names one.
      PATCHBAY_LOCAL_MODEL: 'off',
      // Tests run many servers at once: no fixed gateway port unless a test asks for one.
      PATCHBAY_CONFIG: JSON.stringify({ gateway: { port: 0 }, ...opts.config }),
      ...opts.env,
    });
  }

  protected onMessage(msg: Msg): void {
    this.messages.push(msg);
    // Answer server → client requests the way a plain editor would.
    if (msg.method === 'editor/getDiagnostics' && msg.id !== undefined) this.onServerRequest?.(msg);
    for (const w of [...this.waiters]) {
      if (w.pred(msg)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(msg);
      }
    }
  }

  onServerRequest?: (m: Msg) => void;

  async request(method: string, params?: unknown): Promise<Msg> {
    const id = this.nextId++;
    const p = this.waitFor((m) => m.id === id && m.method === undefined, `response to ${method}`);
    this.send({ id, method, ...(params === undefined ? {} : { params }) });
    return p;
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
    return this.messages.filter((m) => m.method === 'chat/contentReceived' && m.params.chatId === chatId).map((m) => m.params);
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
      (m) => m.method === 'chat/contentReceived' && m.params.chatId === chatId && m.params.content.type === 'progress' && m.params.content.state === 'finished' && ++count === nth,
      `turn ${nth} of ${chatId} to finish`,
      timeoutMs,
    );
  }

  async initialize(root: string, extra: Record<string, unknown> = {}): Promise<Msg> {
    const res = await this.request('initialize', { ...initializeParams(root, 'test'), ...extra });
    this.notify('initialized', {});
    return res;
  }

  /** shutdown (given 2 s) + exit, SIGKILL after 3 s more. */
  stop(): Promise<number | null> {
    return this.stopWith(() => Promise.race([this.request('shutdown'), new Promise((r) => setTimeout(r, 2000))]), 3000);
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
