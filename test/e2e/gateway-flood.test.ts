/**
 * Gateway floods and deep nesting through `patchbay server` (issue 14, points 8 and 9): inject
 * bursts, providers over their budget, idle sockets that would lock real providers out, and
 * results nested deeper than anything can walk.
 */
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { bootWithChat, Raw } from './gateway-raw.js';
import { useFakeLlmSuite } from './harness.js';

const { llm, track } = useFakeLlmSuite();
const boot = (extra: Record<string, unknown> = {}) => bootWithChat(llm(), track, extra);
const FIXTURES = resolve(import.meta.dirname, '../fixtures/providers');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('gateway floods (point 8)', () => {
  it('100 back-to-back inject pushes into an idle chat make one turn (at most two), and the LLM reads them all', async () => {
    const { p, chatId, url, token } = await boot({ toolCall: { approval: { byDefault: 'allow' } } });
    const prov = await Raw.open(url);
    expect(await prov.hello(token, chatId, 'alerts')).toMatchObject({ type: 'hello.ack' });
    const before = llm().requests.length;
    for (let i = 0; i < 100; i++) prov.send({ type: 'push', level: 'inject', event: `alert-${String(i).padStart(3, '0')}-end` });
    const seen = () =>
      new Set(
        llm()
          .requests.slice(before)
          .flatMap((r) => JSON.stringify(r.body).match(/alert-\d{3}-end/g) ?? []),
      );
    await until(() => seen().size === 100, 30_000, 'the LLM to read all 100 events');
    await p.turnDone(chatId, 2);
    // Nothing more follows once the chat is idle again.
    await sleep(500);
    expect(llm().requests.length - before).toBeLessThanOrEqual(2);
    prov.close();
  });

  it('a provider surfacing 500 events: the chat shows a burst and one count of the rest; every event stays in its stream', async () => {
    // A message budget high enough that all 500 are accepted: this is about what reaches the chat.
    const { p, home, chatId, url, token } = await boot({ gateway: { port: 0, rateLimitPerSecond: 100_000 } });
    const prov = await Raw.open(url);
    expect(await prov.hello(token, chatId, 'surfer')).toMatchObject({ type: 'hello.ack' });
    for (let i = 0; i < 500; i++) prov.send({ type: 'push', level: 'surface', event: `ev-${i}` });
    const texts = () => p.contents(chatId).map((c) => String(c.content.text ?? ''));
    await until(() => texts().some((t) => /events from provider "surfer" suppressed/.test(t)), 10_000, 'the suppressed count');
    const shown = texts().filter((t) => /\] surfer: ev-\d+/.test(t)).length;
    expect(shown).toBeGreaterThanOrEqual(50);
    expect(shown).toBeLessThan(100);
    expect(texts().find((t) => /suppressed/.test(t))).toMatch(/all are kept in their streams/);
    // Stored in batches: read once they are all in.
    const stored = () => {
      const db = new Database(join(home, '.patchbay', 'patchbay.db'), { readonly: true });
      try {
        return (db.prepare("SELECT count(*) AS n FROM events WHERE source = 'surfer'").get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    await until(() => stored() === 500, 10_000, 'all 500 events stored');
    prov.close();
  });

  it('a provider over its budget is not read until its bucket refills: its excess costs no work', async () => {
    const { p, chatId, url, token } = await boot({ gateway: { port: 0, rateLimitPerSecond: 20 } });
    const prov = await Raw.open(url);
    expect(await prov.hello(token, chatId, 'noisy')).toMatchObject({ type: 'hello.ack' });
    const SENT = 20_000;
    for (let i = 0; i < SENT; i++) prov.send({ type: 'push', level: 'keep', event: `e${i}` });
    await prov.next((m) => m.type === 'error' && m.code === 'RATE_LIMITED');
    await sleep(1500);
    // Every frame read is answered (stored or RATE_LIMITED); a gateway that kept reading would
    // have answered nearly all 20,000 by now, one that pauses only what it read before pausing.
    const limited = prov.got.filter((m) => m.code === 'RATE_LIMITED').length;
    expect(limited).toBeLessThan(SENT / 4);
    expect(prov.ws.readyState).toBe(WebSocket.OPEN);
    // The editor is answered meanwhile, and the provider is read again once its budget is back.
    expect((await p.request('chat/queryCommands', { chatId, query: '' })).result.commands.length).toBeGreaterThan(0);
    const more = prov.got.length;
    await until(() => prov.got.length > more, 10_000, 'the gateway to read the provider again');
    prov.close();
  });

  it("300 sockets that never authenticate don't lock out the spec's Node example provider", async () => {
    const { p, url, token } = await boot({ toolCall: { approval: { byDefault: 'allow' } }, gateway: { port: 0, maxConnections: 20, maxUnauthenticated: 16 } });
    const idle: WebSocket[] = [];
    try {
      for (let i = 0; i < 300; i++) {
        const ws = new WebSocket(url);
        ws.on('error', () => {});
        idle.push(ws);
        await new Promise((r) => (ws.once('open', r), ws.once('close', r), ws.once('unexpected-response', r)));
      }
      // The newest are still open; the oldest were closed to make room.
      expect(idle.slice(-10).every((ws) => ws.readyState === WebSocket.OPEN)).toBe(true);
      const port = new URL(url).port;
      const src = readFileSync(resolve(FIXTURES, 'example-provider.mjs'), 'utf8').replace('localhost:9400', `localhost:${port}`);
      const ex = spawn(process.execPath, ['--input-type=module', '-e', src], { cwd: FIXTURES, env: { PATH: process.env.PATH ?? '', TAP_PROVIDER_TOKEN: token }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      ex.stdout.on('data', (d: Buffer) => (out += d.toString()));
      ex.stderr.on('data', (d: Buffer) => (out += d.toString()));
      try {
        await until(() => /Registered as p-[0-9a-f]+/.test(out), 15_000, `the example to register; output: ${out}`);
        await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.name === 'example-provider' && m.params.status === 'running');
      } finally {
        ex.kill('SIGKILL');
      }
    } finally {
      for (const ws of idle) ws.terminate();
    }
  });
});

describe('gateway nesting depth (point 9)', () => {
  it('a tool.result nesting 200,000 arrays fails its call with a clear tool error; the server goes on', async () => {
    const { p, chatId, url, token } = await boot({ toolCall: { approval: { byDefault: 'allow' } } });
    const prov = await Raw.open(url);
    const deep = { name: 'deep', description: 'Deep', parameters: { type: 'object', properties: {} } };
    expect(await prov.hello(token, chatId, 'nest', [deep])).toMatchObject({ type: 'hello.ack' });
    llm().script([{ toolCall: { id: 'd1', name: 'nest__deep', args: {} } }], [{ text: 'saw it' }]);
    await p.request('chat/prompt', { chatId, message: 'go deep' });
    const call = await prov.next((m) => m.type === 'tool.call');
    const n = 200_000;
    prov.send(`{"type":"tool.result","id":${JSON.stringify(call.id)},"data":${'['.repeat(n)}${']'.repeat(n)}}`);
    const err = await prov.next((m) => m.type === 'error' && m.replyTo === 'tool.result');
    expect(err).toMatchObject({ code: 'INVALID_JSON', message: expect.stringMatching(/nested deeper than 256 levels/) });
    await p.turnDone(chatId, 2);
    const called = p.contents(chatId).find((c) => c.content.type === 'toolCalled' && c.content.id === 'd1')!.content;
    expect(called.error).toBe(true);
    expect(called.outputs[0].text).toMatch(/tool\.result is nested deeper than 256 levels/);
    // A push nesting 20,000 objects: a clear error, and the provider stays bound.
    prov.send(`{"type":"push","level":"keep","event":"x","metadata":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}`);
    expect(await prov.next((m) => m.type === 'error' && m.replyTo === 'push')).toMatchObject({ code: 'INVALID_JSON', message: expect.stringMatching(/nested deeper/) });
    expect(prov.ws.readyState).toBe(WebSocket.OPEN);
    expect((await p.request('chat/queryCommands', { chatId, query: '' })).result.commands.length).toBeGreaterThan(0);
    prov.close();
  });
});
