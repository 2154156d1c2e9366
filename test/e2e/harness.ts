/**
 * Drives the built `patchbay server` over real stdio with hand-framed messages, so tests
 * see exactly the bytes an editor would (and can send malformed ones).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export const BIN = resolve(import.meta.dirname, '../../bin/patchbay');

export interface Msg {
  jsonrpc: '2.0';
  id?: number | string | null;
  method?: string;
  params?: any;
  result?: any;
  error?: { code: number; message: string; data?: unknown };
}

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

export class EcaProc {
  readonly child: ChildProcessWithoutNullStreams;
  readonly messages: Msg[] = [];
  stderr = '';
  private buf = Buffer.alloc(0);
  private nextId = 1;
  private waiters: Array<{ pred: (m: Msg) => boolean; resolve: (m: Msg) => void; from: number }> = [];
  readonly exited: Promise<number | null>;

  constructor(opts: { home: string; config?: Record<string, unknown>; env?: Record<string, string>; args?: string[] }) {
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: opts.home,
      XDG_CONFIG_HOME: join(opts.home, '.config'),
      PATCHBAY_HOME: join(opts.home, '.patchbay'),
      ...(opts.config ? { PATCHBAY_CONFIG: JSON.stringify(opts.config) } : {}),
      ...opts.env,
    };
    this.child = spawn(process.execPath, [BIN, 'server', ...(opts.args ?? [])], { env, stdio: 'pipe' });
    this.child.stdout.on('data', (d: Buffer) => this.onData(d));
    this.child.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.exited = new Promise((r) => this.child.on('exit', (code) => r(code)));
  }

  private onData(d: Buffer): void {
    this.buf = Buffer.concat([this.buf, d]);
    for (;;) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const m = /Content-Length: (\d+)/i.exec(this.buf.subarray(0, end).toString('ascii'));
      if (!m) throw new Error(`bad header from server: ${this.buf.subarray(0, end).toString()}`);
      const len = Number(m[1]);
      if (this.buf.length < end + 4 + len) return;
      const msg = JSON.parse(this.buf.subarray(end + 4, end + 4 + len).toString('utf8')) as Msg;
      this.buf = this.buf.subarray(end + 4 + len);
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
  }

  onServerRequest?: (m: Msg) => void;

  writeRaw(bytes: string | Buffer): void {
    this.child.stdin.write(bytes);
  }

  send(msg: Record<string, unknown>): void {
    const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...msg }), 'utf8');
    this.writeRaw(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]));
  }

  notify(method: string, params?: unknown): void {
    this.send({ method, ...(params === undefined ? {} : { params }) });
  }

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
    const res = await this.request('initialize', {
      processId: process.pid,
      clientInfo: { name: 'test', version: '1' },
      capabilities: { codeAssistant: { chat: true } },
      workspaceFolders: [{ uri: pathToFileURL(root).href, name: 'ws' }],
      ...extra,
    });
    this.notify('initialized', {});
    return res;
  }

  async stop(): Promise<number | null> {
    if (this.child.exitCode !== null) return this.child.exitCode;
    try {
      await Promise.race([this.request('shutdown'), new Promise((r) => setTimeout(r, 2000))]);
      this.notify('exit');
    } catch {
      /* already gone */
    }
    const t = setTimeout(() => this.child.kill('SIGKILL'), 3000);
    const code = await this.exited;
    clearTimeout(t);
    return code;
  }
}

export function workspace(files: Record<string, string> = {}): string {
  const root = tempDir('pb-ws-');
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), content);
  }
  return root;
}
