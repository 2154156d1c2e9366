/** The provider gateway through `patchbay server`: providers bound to chats, pushes, lifecycle. */
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

async function boot(extra: Record<string, unknown> = {}) {
  const home = tempDir();
  const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url, 'openai-chat', { toolCall: { approval: { byDefault: 'allow' } }, ...extra }) }));
  await p.initialize(workspace());
  await p.waitFor((m) => m.method === 'config/updated');
  const dir = join(home, '.patchbay', 'gateway');
  const deadline = Date.now() + 10_000;
  while (!existsSync(join(dir, 'address')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const url = readFileSync(join(dir, 'address'), 'utf8').trim();
  const token = readFileSync(join(dir, 'provider-token'), 'utf8').trim();
  return { p, url, token, dir };
}

/** A raw provider: a real ws client speaking the core profile by hand. */
class RawProvider {
  readonly ws: WebSocket;
  readonly got: any[] = [];
  private waiters: Array<{ pred: (m: any) => boolean; resolve: (m: any) => void }> = [];
  autoGoodbye = true;
  constructor(url: string) {
    this.ws = new WebSocket(url);
    this.ws.on('message', (raw) => {
      const m = JSON.parse(String(raw));
      this.got.push(m);
      // Like the spec's example: leave cleanly when the gateway says it is shutting down.
      if (m.type === 'session.lifecycle' && m.state === 'shutdown.pending' && this.autoGoodbye) {
        this.send({ type: 'goodbye', reason: 'session ending' });
        this.ws.close();
      }
      for (const w of [...this.waiters]) if (w.pred(m)) (this.waiters.splice(this.waiters.indexOf(w), 1), w.resolve(m));
    });
  }
  opened(): Promise<void> {
    return new Promise((r, j) => (this.ws.once('open', () => r()), this.ws.once('error', j)));
  }
  send(m: unknown): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(m));
  }
  next(pred: (m: any) => boolean, ms = 10_000): Promise<any> {
    const seen = this.got.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`provider: no matching message; got ${JSON.stringify(this.got).slice(0, 500)}`)), ms);
      this.waiters.push({ pred, resolve: (m) => (clearTimeout(t), resolve(m)) });
    });
  }
  async bind(token: string, name: string, tools: unknown[] = []): Promise<{ sessionId: string; active: any[] }> {
    await this.opened();
    this.send({ type: 'auth', token });
    const sessions = await this.next((m) => m.type === 'sessions');
    const sessionId = sessions.active[0].id;
    this.send({ type: 'hello', name, protocolVersion: 2, session: sessionId, tools });
    await this.next((m) => m.type === 'hello.ack');
    return { sessionId, active: sessions.active };
  }
}

const greet = { name: 'greet', description: 'Greet someone', parameters: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } };

describe('provider gateway in patchbay server', () => {
  it("lists open chats as sessions; a bound provider's tool is called by the LLM in that chat only", async () => {
    const { p, url, token } = await boot();
    llm().script([{ text: 'hi' }]);
    const chatId = (await p.request('chat/prompt', { message: 'first' })).result.chatId;
    await p.turnDone(chatId);
    const prov = new RawProvider(url);
    const { sessionId, active } = await prov.bind(token, 'greeter', [greet]);
    expect(sessionId).toBe(chatId);
    expect(active[0]).toMatchObject({ id: chatId, cwd: expect.any(String) });
    const updated = await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.name === 'greeter');
    expect(updated.params).toMatchObject({ type: 'provider', status: 'running', tools: [{ name: 'greeter__greet' }] });
    prov.ws.on('message', (raw) => {
      const m = JSON.parse(String(raw));
      if (m.type === 'tool.call') prov.send({ type: 'tool.result', id: m.id, data: `Hello, ${m.args.name}!` });
    });
    llm().script([{ toolCall: { id: 'g1', name: 'greeter__greet', args: { name: 'Ada' } } }], [{ text: 'greeted' }]);
    await p.request('chat/prompt', { chatId, message: 'greet Ada' });
    await p.turnDone(chatId, 2);
    const called = p.contents(chatId).find((c) => c.content.type === 'toolCalled')!.content;
    expect(called).toMatchObject({ origin: 'provider', server: 'greeter', name: 'greet', error: false });
    expect(called.outputs[0].text).toBe('Hello, Ada!');
    // Another chat does not see the provider's tool.
    llm().script([{ text: 'other' }]);
    const other = (await p.request('chat/prompt', { message: 'other chat' })).result.chatId;
    await p.turnDone(other);
    expect(
      llm()
        .requests.at(-1)!
        .body.tools.map((t: any) => t.function.name),
    ).not.toContain('greeter__greet');
    prov.ws.close();
    await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.name === 'greeter' && m.params.status === 'stopped');
  });

  it('keep stores, surface shows in the chat, inject into an idle chat starts a turn; the LLM reads the stream', async () => {
    const { p, url, token } = await boot();
    llm().script([{ text: 'ready' }]);
    const chatId = (await p.request('chat/prompt', { message: 'start' })).result.chatId;
    await p.turnDone(chatId);
    const prov = new RawProvider(url);
    await prov.bind(token, 'ci');
    prov.send({ type: 'push', level: 'keep', event: 'build 41 passed', metadata: { build: 41 } });
    prov.send({ type: 'push', level: 'surface', event: 'build 42 running', stream: 'builds' });
    await p.waitFor((m) => m.params?.content?.type === 'text' && m.params.content.text === '[builds] ci: build 42 running');
    llm().script([{ toolCall: { id: 'r1', name: 'patchbay__read_event_stream', args: { stream: 'ci' } } }], [{ text: 'I see the failure' }]);
    prov.send({ type: 'push', level: 'inject', event: 'build 43 FAILED', stream: 'ci' });
    await p.turnDone(chatId, 2);
    const injected = llm()
      .requests.at(-2)!
      .body.messages.filter((m: any) => m.role === 'user')
      .at(-1).content;
    expect(injected).toMatch(/ci.*build 43 FAILED/s);
    const read = p.contents(chatId).find((c) => c.content.type === 'toolCalled')!.content.outputs[0].text;
    expect(read).toMatch(/\[keep\] ci: build 41 passed \{"build":41\}/);
    expect(read).toMatch(/\[inject\] ci: build 43 FAILED/);
    expect(read).not.toMatch(/build 42/);
  });

  it('inject during a turn joins it at the next model step', async () => {
    const { p, url, token } = await boot();
    llm().script([{ text: 'ready' }]);
    const chatId = (await p.request('chat/prompt', { message: 'start' })).result.chatId;
    await p.turnDone(chatId);
    const prov = new RawProvider(url);
    await prov.bind(token, 'alerts');
    llm().script([{ delay: 400 }, { toolCall: { id: 't1', name: 'patchbay__read_file', args: { path: 'nope.txt' } } }], [{ text: 'done' }]);
    const from = p.messages.length;
    await p.request('chat/prompt', { chatId, message: 'work' });
    await p.waitFor((m) => m.method === 'chat/statusChanged' && m.params.status === 'running' && m.params.chatId === chatId, 'running', 10_000, from);
    prov.send({ type: 'push', level: 'inject', event: 'disk almost full' });
    await p.turnDone(chatId, 2);
    const users = llm()
      .requests.at(-1)!
      .body.messages.filter((m: any) => m.role === 'user')
      .map((m: any) => m.content);
    expect(users.at(-2)).toBe('work');
    expect(users.at(-1)).toMatch(/disk almost full/);
    expect(llm().requests).toHaveLength(3);
  });

  it('sends session.lifecycle idle after a turn and shutdown.pending when the chat is deleted', async () => {
    const { p, url, token } = await boot();
    llm().script([{ text: 'a' }], [{ text: 'b' }]);
    const chatId = (await p.request('chat/prompt', { message: 'one' })).result.chatId;
    await p.turnDone(chatId);
    const prov = new RawProvider(url);
    prov.autoGoodbye = false;
    await prov.bind(token, 'watcher');
    await p.request('chat/prompt', { chatId, message: 'two' });
    await p.turnDone(chatId, 2);
    await prov.next((m) => m.type === 'session.lifecycle' && m.state === 'idle');
    await p.request('chat/delete', { chatId });
    const pending = await prov.next((m) => m.type === 'session.lifecycle' && m.state === 'shutdown.pending');
    expect(pending).toMatchObject({ sessionId: chatId, deadline: 10000 });
    const states = prov.got.filter((m) => m.type === 'session.lifecycle').map((m) => m.state);
    expect(states.indexOf('idle')).toBeLessThan(states.indexOf('shutdown.pending'));
    prov.send({ type: 'goodbye', reason: 'bye' });
    await new Promise<void>((r) => prov.ws.once('close', () => r()));
  });

  it('publishes the token to processes patchbay starts, and removes the token file on shutdown', async () => {
    const { p, dir, token } = await boot();
    llm().script([{ toolCall: { id: 's1', name: 'patchbay__shell_command', args: { command: 'echo "$PATCHBAY_PROVIDER_TOKEN $TAP_PROVIDER_TOKEN"' } } }], [{ text: 'ok' }]);
    const chatId = (await p.request('chat/prompt', { message: 'env' })).result.chatId;
    await p.turnDone(chatId);
    const out = p.contents(chatId).find((c) => c.content.type === 'toolCalled')!.content.outputs[0].text;
    expect(out).toContain(`${token} ${token}`);
    expect(token).toMatch(/^ptk-[0-9a-f]{32}$/);
    expect(await p.stop()).toBe(0);
    expect(existsSync(join(dir, 'provider-token'))).toBe(false);
  });
});
