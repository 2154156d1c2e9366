/**
 * Shared helpers for the gateway tests: a real GatewayHostImpl on port 0 with a fake
 * GatewayChats that records every call, and a real `ws` client with a message inbox.
 */
import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import WebSocket from 'ws';
import type { Tool, ToolContext } from '../../src/shapes/tool.js';
import { GatewayHostImpl, type GatewayTimings } from '../../src/peers/gateway/index.js';
import type { GatewayChats, GatewayConfig } from '../../src/peers/gateway/types.js';
import { logToStderr } from '../../src/util/log.js';

logToStderr(false);

export type Push = Parameters<GatewayChats['push']>[0];
export type Announced = Array<{ name: string; providerId: string; tools: Tool[] }>;

/** Records what the gateway tells patchbay; `tools` is the current state, `calls` the history. */
export class FakeChats implements GatewayChats {
  sessions = [
    { id: 'chat-1', label: 'First chat', cwd: '/work/a' },
    { id: 'chat-2', label: 'Second chat', cwd: '/work/b' },
  ];
  readonly tools = new Map<string, Tool[]>();
  readonly setToolsCalls: Array<{ chatId: string; provider: string; names: string[] }> = [];
  readonly pushes: Push[] = [];
  readonly announced: Array<{ chatId: string; providers: Announced }> = [];

  active(): Array<{ id: string; label: string; cwd: string }> {
    return this.sessions;
  }
  setTools(chatId: string, providerName: string, tools: Tool[]): string | undefined {
    this.setToolsCalls.push({ chatId, provider: providerName, names: tools.map((t) => t.name) });
    const key = `${chatId}/${providerName}`;
    if (tools.length) this.tools.set(key, tools);
    else this.tools.delete(key);
    return undefined;
  }
  push(entry: Push): void {
    this.pushes.push(entry);
  }
  providersChanged(chatId: string, providers: Announced): void {
    this.announced.push({ chatId, providers });
  }
  tool(chatId: string, provider: string, name: string): Tool {
    const t = this.tools.get(`${chatId}/${provider}`)?.find((x) => x.name === name);
    if (!t) throw new Error(`no tool ${provider}/${name} in ${chatId}`);
    return t;
  }
}

export function tempHome(): string {
  return realpathSync(mkdtempSync(join(tmpdir(), 'patchbay-gateway-')));
}

export interface TestGateway {
  gateway: GatewayHostImpl;
  chats: FakeChats;
  url: string;
  port: number;
  home: string;
}

const running: GatewayHostImpl[] = [];
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.ws.terminate();
  await Promise.all(running.splice(0).map((g) => g.stop()));
});

export const fastTimings: Partial<GatewayTimings> = { shutdownDeadlineMs: 200 };

export async function startGateway(config: Partial<GatewayConfig> = {}, timings: Partial<GatewayTimings> = {}): Promise<TestGateway> {
  const chats = new FakeChats();
  const home = tempHome();
  const gateway = new GatewayHostImpl({
    config: { enabled: true, host: '127.0.0.1', port: 0, injectStartsTurn: true, maxConnections: 2000, maxUnauthenticated: 256, rateLimitPerSecond: 1000, ...config },
    home,
    chats,
    timings: { ...fastTimings, ...timings },
  });
  running.push(gateway);
  const { url, port } = await gateway.start();
  return { gateway, chats, url, port, home };
}

export type Msg = Record<string, unknown> & { type: string };

/** A real ws client with an inbox: `next()` takes messages in arrival order. */
export class Client {
  readonly inbox: Msg[] = [];
  private waiters: Array<() => void> = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  isClosed = false;

  constructor(readonly ws: WebSocket) {
    clients.push(this);
    ws.on('message', (d) => {
      this.inbox.push(JSON.parse(String(d)) as Msg);
      this.wake();
    });
    ws.on('error', () => {});
    this.closed = new Promise((r) =>
      ws.on('close', (code, reason) => {
        this.isClosed = true;
        this.wake();
        r({ code, reason: reason.toString() });
      }),
    );
  }

  static async open(url: string, opts: WebSocket.ClientOptions = {}): Promise<Client> {
    const ws = new WebSocket(url, opts);
    const c = new Client(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return c;
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  send(msg: unknown): void {
    this.ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg));
  }

  /** The next message (of `type`, skipping others when given). Rejects after `ms`. */
  async next(type?: string, ms = 3000): Promise<Msg> {
    const deadline = Date.now() + ms;
    for (;;) {
      const i = this.inbox.findIndex((m) => !type || m.type === type);
      if (i >= 0) return this.inbox.splice(i, 1)[0];
      if (this.isClosed) throw new Error(`closed while waiting for ${type ?? 'a message'}; inbox: ${JSON.stringify(this.inbox)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${type ?? 'a message'}; inbox: ${JSON.stringify(this.inbox)}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  /** Sends `msg` and waits for the gateway's error about it. */
  async expectError(msg: unknown, code: string): Promise<Msg> {
    this.send(msg);
    const e = await this.next('error');
    if (e.code !== code) throw new Error(`expected ${code}, got ${JSON.stringify(e)}`);
    return e;
  }

  async auth(token: string): Promise<Msg> {
    this.send({ type: 'auth', token });
    return this.next('sessions');
  }

  /** auth + hello; resolves with the hello.ack. */
  async bind(t: TestGateway, name = 'prov', tools: unknown[] = [greet()], session = 'chat-1'): Promise<Msg> {
    await this.auth(t.gateway.token);
    this.send({ type: 'hello', name, protocolVersion: 2, session, tools });
    return this.next('hello.ack');
  }
}

export function greet(name = 'greet', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, description: `tool ${name}`, parameters: { type: 'object', properties: { who: { type: 'string' } } }, ...extra };
}

export function ctx(signal: AbortSignal = new AbortController().signal, chatId = 'chat-1'): ToolContext {
  return { signal, roots: ['/work/a'], chatId, editor: {} };
}

export function text(r: { outputs: Array<{ type: string; text?: string }> }): string {
  return r.outputs.map((o) => o.text ?? '').join('');
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function waitFor(cond: () => boolean, ms = 3000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}
