/** Shared by the gateway abuse tests: a server with a chat open, and a provider speaking the core profile by hand. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import type { FakeLlm } from '../fixtures/fake-llm.js';
import { EcaProc, fakeProviderConfig, tempDir, workspace } from './harness.js';

/** A server with one chat open (one fake LLM turn done) and its gateway's address and token. */
export async function bootWithChat(llm: FakeLlm, track: (p: EcaProc) => EcaProc, extra: Record<string, unknown> = {}) {
  const home = tempDir();
  const p = track(new EcaProc({ home, config: fakeProviderConfig(llm.url, 'openai-chat', extra) }));
  await p.initialize(workspace());
  await p.waitFor((m) => m.method === 'config/updated');
  const dir = join(home, '.patchbay', 'gateway');
  const deadline = Date.now() + 10_000;
  while (!existsSync(join(dir, 'address')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  llm.script([{ text: 'ready' }]);
  const chatId = (await p.request('chat/prompt', { message: 'start' })).result.chatId as string;
  await p.turnDone(chatId);
  return { p, home, chatId, url: readFileSync(join(dir, 'address'), 'utf8').trim(), token: readFileSync(join(dir, 'provider-token'), 'utf8').trim() };
}

/** A provider speaking the core profile by hand over a real socket. */
export class Raw {
  readonly ws: WebSocket;
  readonly got: any[] = [];
  constructor(url: string) {
    this.ws = new WebSocket(url);
    this.ws.on('message', (d) => this.got.push(JSON.parse(String(d))));
    this.ws.on('error', () => {});
  }
  static async open(url: string): Promise<Raw> {
    const r = new Raw(url);
    await new Promise((ok, fail) => (r.ws.once('open', ok), r.ws.once('error', fail)));
    return r;
  }
  send(m: unknown): void {
    this.ws.send(typeof m === 'string' ? m : JSON.stringify(m));
  }
  async next(pred: (m: any) => boolean, ms = 10_000): Promise<any> {
    const end = Date.now() + ms;
    for (;;) {
      const i = this.got.findIndex(pred);
      if (i >= 0) return this.got.splice(i, 1)[0];
      if (Date.now() > end) throw new Error(`provider: nothing matching; got ${JSON.stringify(this.got).slice(0, 600)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  /** auth + hello; resolves with the hello.ack or the error that refused it. */
  async hello(token: string, session: string, name: string, tools: unknown[] = []): Promise<any> {
    this.send({ type: 'auth', token });
    await this.next((m) => m.type === 'sessions');
    this.send({ type: 'hello', name, protocolVersion: 2, session, tools });
    return this.next((m) => m.type === 'hello.ack' || (m.type === 'error' && m.replyTo === 'hello'));
  }
  close(): void {
    this.ws.terminate();
  }
}
