/**
 * The provider SDK (src/provider) against the real gateway (src/peers/gateway) over real
 * WebSockets, with a fake GatewayChats standing in for patchbay's chats and, where the wire
 * itself matters, a recording relay in between (test/fixtures/providers/harness.ts).
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createProvider, GatewayError, ToolError, type Provider, type ProviderOptions } from '../../src/provider/index.js';
import { setLogLevel } from '../../src/util/log.js';
import { FakeChats, Relay, removeTempHomes, sleep, startGateway, text, until, type TestGateway } from '../fixtures/providers/harness.js';

const FAST = { initialMs: 20, maxMs: 200 };

const cleanups: Array<() => Promise<unknown> | unknown> = [];
function later<T>(x: T, f: (x: T) => Promise<unknown> | unknown): T {
  cleanups.push(() => f(x));
  return x;
}

async function gateway(o: Parameters<typeof startGateway>[0] = {}): Promise<TestGateway> {
  return later(await startGateway(o), (g) => g.gateway.stop());
}

function provider(g: { url: string; home: string }, o: Partial<ProviderOptions> = {}): Provider {
  const p = createProvider({ name: 'weather', url: g.url, env: { PATCHBAY_HOME: g.home }, reconnect: FAST, ...o });
  return later(p, (x) => x.close());
}

const forecast = {
  name: 'forecast',
  description: 'Forecast for a city',
  parameters: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
  handler: ({ city }: { city: string }) => `Sunny in ${city}`,
};

beforeAll(() => setLogLevel('error'));

afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
  removeTempHomes();
});

describe('provider SDK: connect and bind', () => {
  it('authenticates with the token file, binds to the first session and registers its tools', async () => {
    const g = await gateway({
      chats: new FakeChats([
        { id: 's1', label: 'one', cwd: '/a' },
        { id: 's2', label: 'two', cwd: '/b' },
      ]),
    });
    const p = provider(g, { tools: [forecast] });
    const states: string[] = [];
    const lifecycle: string[] = [];
    p.on('state', (s) => states.push(s));
    p.on('lifecycle', (s) => lifecycle.push(s));
    expect(p.state).toBe('idle');

    const info = await p.connect();

    expect(info.sessionId).toBe('s1');
    expect(info.providerId).toMatch(/^p-/);
    expect(p.state).toBe('bound');
    expect(p.bound).toEqual(info);
    expect(states).toEqual(['connecting', 'authenticating', 'binding', 'bound']);
    expect(g.gateway.providers()).toEqual([{ name: 'weather', providerId: info.providerId, chatId: 's1', tools: 1 }]);
    expect(g.chats.tool('s1', 'weather', 'forecast')?.inputSchema).toEqual(forecast.parameters);
    await until(() => lifecycle.includes('started'), 'session.lifecycle started');
    // connect() when bound answers at once with the same binding
    await expect(p.connect()).resolves.toEqual(info);
  });

  it('binds to the session the `session` option picks (id or function)', async () => {
    const chats = new FakeChats([
      { id: 's1', label: 'one', cwd: '/a' },
      { id: 's2', label: 'two', cwd: '/b' },
    ]);
    const g = await gateway({ chats });
    const byFn = provider(g, { name: 'a', session: (active) => active.find((s) => s.label === 'two')?.id });
    const byId = provider(g, { name: 'b', session: 's2' });
    expect((await byFn.connect()).sessionId).toBe('s2');
    expect((await byId.connect()).sessionId).toBe('s2');
  });

  it('keeps retrying while the session it wants does not exist, and binds once it appears', async () => {
    const chats = new FakeChats([]);
    const g = await gateway({ chats });
    const relay = later(await Relay.start(g.url), (r) => r.close());
    const p = provider({ url: relay.url, home: g.home }, { session: (active) => active.find((s) => s.id === 'later')?.id });
    const errors: string[] = [];
    p.on('error', (e) => errors.push((e as { code?: string }).code ?? e.message));
    const bound = p.connect();
    await until(() => errors.filter((c) => c === 'NO_SESSION').length >= 2, 'two NO_SESSION attempts');
    expect(p.state === 'reconnecting' || p.state === 'connecting' || p.state === 'authenticating').toBe(true);
    chats.sessions = [{ id: 'later', label: 'late chat', cwd: '/c' }];
    expect((await bound).sessionId).toBe('later');
    // no hello went out while there was nothing to bind to
    expect(relay.sent('hello')).toHaveLength(1);
  });

  it('an INVALID_SESSION answer is reported and retried, not fatal', async () => {
    const chats = new FakeChats();
    const g = await gateway({ chats });
    const p = provider(g, { session: 'gone' });
    const errors: GatewayError[] = [];
    p.on('error', (e) => e instanceof GatewayError && errors.push(e));
    const bound = p.connect();
    await until(() => errors.length > 0, 'INVALID_SESSION');
    expect(errors[0].code).toBe('INVALID_SESSION');
    expect(errors[0].fatal).toBe(false);
    chats.sessions = [{ id: 'gone', label: 'back again', cwd: '/' }];
    expect((await bound).sessionId).toBe('gone');
  });
});

describe('provider SDK: tool calls', () => {
  it('answers calls: strings as they are, other values as JSON, undefined as empty text', async () => {
    const g = await gateway();
    const seen: Array<{ args: unknown; sessionId: string; callId: string }> = [];
    const p = provider(g, {
      tools: [
        forecast,
        { name: 'stats', description: 'JSON out', handler: async (args, ctx) => (seen.push({ args, sessionId: ctx.sessionId, callId: ctx.callId }), { n: 3, list: [1, 2] }) },
        { name: 'nothing', description: 'returns nothing', handler: () => undefined },
      ],
    });
    await p.connect();
    const r = await g.chats.call('s1', 'weather', 'forecast', { city: 'Oslo' });
    expect(r).toEqual({ error: false, outputs: [{ type: 'text', text: 'Sunny in Oslo' }] });
    expect(JSON.parse(text(await g.chats.call('s1', 'weather', 'stats', { q: 1 })))).toEqual({ n: 3, list: [1, 2] });
    expect(seen[0].args).toEqual({ q: 1 });
    expect(seen[0].sessionId).toBe('s1');
    expect(seen[0].callId).toMatch(/\S/);
    expect(await g.chats.call('s1', 'weather', 'nothing', {})).toEqual({ error: false, outputs: [{ type: 'text', text: '' }] });
  });

  it('turns thrown errors into error results: INTERNAL, a spec code set on the error, or a ToolError code', async () => {
    const g = await gateway();
    const p = provider(g, {
      tools: [
        {
          name: 'boom',
          description: '',
          handler: () => {
            throw new Error('kaput');
          },
        },
        {
          name: 'rejects',
          description: '',
          handler: async () => {
            throw new Error('async kaput');
          },
        },
        {
          name: 'missing',
          description: '',
          handler: async () => {
            throw new ToolError('no such city', 'NOT_FOUND');
          },
        },
        {
          name: 'coded',
          description: '',
          handler: async () => {
            throw Object.assign(new Error('too slow'), { code: 'TIMEOUT' });
          },
        },
        {
          name: 'enoent',
          description: '',
          handler: async () => {
            throw Object.assign(new Error('ENOENT: no file'), { code: 'ENOENT' });
          },
        },
        {
          name: 'cyclic',
          description: '',
          handler: () => {
            const o: Record<string, unknown> = {};
            o.self = o;
            return o;
          },
        },
      ],
    });
    await p.connect();
    const call = (name: string) => g.chats.call('s1', 'weather', name, {});
    expect(await call('boom')).toEqual({ error: true, outputs: [{ type: 'text', text: 'INTERNAL: kaput' }] });
    expect(text(await call('rejects'))).toBe('INTERNAL: async kaput');
    expect(text(await call('missing'))).toBe('NOT_FOUND: no such city');
    expect(text(await call('coded'))).toBe('TIMEOUT: too slow');
    expect(text(await call('enoent'))).toBe('INTERNAL: ENOENT: no file');
    const cyclic = await call('cyclic');
    expect(cyclic.error).toBe(true);
    expect(text(cyclic)).toMatch(/^INTERNAL: result not sent: .*circular/i);
    // the connection survived all of it
    expect(text(await g.chats.call('s1', 'weather', 'boom', {}))).toBe('INTERNAL: kaput');
    expect(p.state).toBe('bound');
  });

  it('a cancelled call aborts the handler signal and answers CANCELLED exactly once', async () => {
    const g = await gateway();
    const relay = later(await Relay.start(g.url), (r) => r.close());
    let aborted: unknown;
    let finishLate!: () => void;
    const p = provider(
      { url: relay.url, home: g.home },
      {
        tools: [
          {
            name: 'slow',
            description: 'waits',
            handler: (_args, { signal }) =>
              new Promise((resolve) => {
                signal.addEventListener('abort', () => (aborted = signal.reason));
                finishLate = () => resolve('finished anyway'); // ignores the signal: must not be sent
              }),
          },
        ],
      },
    );
    await p.connect();
    const ac = new AbortController();
    const result = g.chats.call('s1', 'weather', 'slow', {}, ac.signal);
    await until(() => relay.received('tool.call').length === 1, 'tool.call');
    // The relay has it; the provider gets it a moment later (under load, after this line ran).
    await until(() => p.inFlight === 1, 'the call in flight at the provider');
    ac.abort();
    expect(text(await result)).toMatch(/^CANCELLED/);
    await until(() => aborted !== undefined, 'handler signal aborted');
    expect(aborted).toBeInstanceOf(ToolError);
    expect((aborted as ToolError).code).toBe('CANCELLED');
    const id = relay.received('tool.call')[0].id;
    expect(relay.received('tool.cancel')).toEqual([expect.objectContaining({ type: 'tool.cancel', id, reason: 'cancelled' })]);
    finishLate();
    await sleep(50);
    expect(relay.sent('tool.result')).toEqual([{ type: 'tool.result', id, error: 'Cancelled', errorCode: 'CANCELLED' }]);
    expect(p.inFlight).toBe(0);
  });

  it('a handler that looks at its signal only after the cancel finds it aborted', async () => {
    const g = await gateway();
    let seen: { aborted: boolean; code?: string } | undefined;
    const p = provider(g, {
      tools: [
        {
          name: 'late',
          description: '',
          handler: async (_a, ctx) => {
            await sleep(100);
            seen = { aborted: ctx.signal.aborted, code: (ctx.signal.reason as ToolError | undefined)?.code };
            return 'too late';
          },
        },
      ],
    });
    await p.connect();
    const ac = new AbortController();
    const r = g.chats.call('s1', 'weather', 'late', {}, ac.signal);
    await until(() => p.inFlight === 1, 'running');
    ac.abort();
    expect(text(await r)).toMatch(/^CANCELLED/);
    await until(() => seen !== undefined, 'handler done');
    expect(seen).toEqual({ aborted: true, code: 'CANCELLED' });
  });

  it('a tool timeout reaches the handler as a cancel', async () => {
    const g = await gateway();
    let reason: unknown;
    const p = provider(g, {
      tools: [{ name: 'hang', description: '', timeout: 50, handler: (_a, { signal }) => new Promise((_r, reject) => signal.addEventListener('abort', () => reject((reason = signal.reason)))) }],
    });
    await p.connect();
    const r = await g.chats.call('s1', 'weather', 'hang', {});
    expect(text(r)).toMatch(/^CANCELLED: .*timed out after 50 ms/);
    await until(() => reason !== undefined, 'abort');
    expect(String((reason as Error).message)).toContain('timeout');
  });

  it('runs calls concurrently', async () => {
    const g = await gateway();
    let running = 0;
    let peak = 0;
    const p = provider(g, {
      tools: [
        {
          name: 'wait',
          description: '',
          handler: async ({ i }) => {
            running++;
            peak = Math.max(peak, running);
            await sleep(30);
            running--;
            return `#${String(i)}`;
          },
        },
      ],
    });
    await p.connect();
    const out = await Promise.all(Array.from({ length: 20 }, (_, i) => g.chats.call('s1', 'weather', 'wait', { i })));
    expect(out.map(text)).toEqual(Array.from({ length: 20 }, (_, i) => `#${i}`));
    expect(peak).toBe(20);
  });
});

describe('provider SDK: push and tools.update', () => {
  it('pushes events to the bound session, stream defaulting to the provider name', async () => {
    const g = await gateway();
    const p = provider(g, { tools: [forecast] });
    expect(p.push('keep', 'too early')).toBe(false);
    await p.connect();
    expect(p.push('inject', 'rain is coming', { metadata: { mm: 12 } })).toBe(true);
    expect(p.push('surface', 'radar updated', { stream: 'radar' })).toBe(true);
    await until(() => g.chats.pushes.length === 2, 'two pushes');
    expect(g.chats.pushes).toEqual([
      { chatId: 's1', provider: 'weather', stream: 'weather', level: 'inject', text: 'rain is coming', metadata: { mm: 12 } },
      { chatId: 's1', provider: 'weather', stream: 'radar', level: 'surface', text: 'radar updated' },
    ]);
    // development validation catches a bad push before it leaves
    expect(() => p.push('inject', '')).toThrow(/event/);
    expect(() => p.push('loud' as 'keep', 'x')).toThrow(/level/);
  });

  it('handlers can push while they run', async () => {
    const g = await gateway();
    const p = provider(g, { tools: [{ name: 'work', description: '', handler: (_a, { push }) => (push('keep', 'step 1'), 'done') }] });
    await p.connect();
    expect(text(await g.chats.call('s1', 'weather', 'work', {}))).toBe('done');
    await until(() => g.chats.pushes.length === 1, 'push');
    expect(g.chats.pushes[0]).toMatchObject({ level: 'keep', text: 'step 1', stream: 'weather' });
  });

  it('updateTools replaces the tool list while bound, and is carried by the next hello otherwise', async () => {
    const g = await gateway();
    const relay = later(await Relay.start(g.url), (r) => r.close());
    const p = provider({ url: relay.url, home: g.home }, { tools: [forecast] });
    p.updateTools([forecast, { name: 'alerts', description: 'Weather alerts', handler: () => 'none' }]); // before connect
    await p.connect();
    expect(relay.sent('hello')[0].tools).toEqual([
      { name: 'forecast', description: 'Forecast for a city', parameters: forecast.parameters },
      { name: 'alerts', description: 'Weather alerts', parameters: { type: 'object', properties: {} } },
    ]);
    expect(relay.sent('tools.update')).toHaveLength(0);

    p.updateTools([{ name: 'radar', description: 'Radar image', timeout: 5000, handler: () => 'radar ok' }]);
    await until(() => g.chats.tool('s1', 'weather', 'radar') !== undefined, 'radar registered');
    expect(g.chats.tool('s1', 'weather', 'forecast')).toBeUndefined();
    expect(relay.sent('tools.update')).toEqual([{ type: 'tools.update', tools: [{ name: 'radar', description: 'Radar image', parameters: { type: 'object', properties: {} }, timeout: 5000 }] }]);
    expect(text(await g.chats.call('s1', 'weather', 'radar', {}))).toBe('radar ok');
  });

  it('rejects a bad tool list locally, keeping the old one', async () => {
    const g = await gateway();
    const p = provider(g, { tools: [forecast] });
    await p.connect();
    expect(() => p.updateTools([forecast, forecast])).toThrow(/declared twice/);
    expect(() => p.updateTools([{ name: 'bad name', description: '', handler: () => '' }])).toThrow(/tool name/);
    expect(() => p.updateTools(Array.from({ length: 101 }, (_, i) => ({ name: `t${i}`, description: '', handler: () => '' })))).toThrow(/at most 100/);
    expect(() => createProvider({ name: 'x', tools: [{ name: 'p', description: '', parameters: { type: 'string' } as never, handler: () => '' }] })).toThrow(/parameters/);
    expect(text(await g.chats.call('s1', 'weather', 'forecast', { city: 'Bergen' }))).toBe('Sunny in Bergen');
  });

  it('a tools.update the gateway refuses is reported as an error event', async () => {
    const g = await gateway();
    const p = provider(g, { tools: [forecast] });
    const errors: GatewayError[] = [];
    p.on('error', (e) => e instanceof GatewayError && errors.push(e));
    await p.connect();
    // passes the shared schema, but the gateway cannot compile the JSON Schema
    p.updateTools([{ name: 'odd', description: '', parameters: { type: 'object', properties: { a: { type: 'nonsense' } } }, handler: () => '' }]);
    await until(() => errors.length === 1, 'error for tools.update');
    expect(errors[0]).toMatchObject({ replyTo: 'tools.update', fatal: false });
    expect(p.state).toBe('bound');
    expect(g.chats.tool('s1', 'weather', 'forecast')).toBeDefined();
  });
});

describe('provider SDK: lifecycle, reconnect, close', () => {
  it('shutdown.pending runs onShutdown, then says goodbye before the deadline', async () => {
    const g = await gateway({ timings: { shutdownDeadlineMs: 3000 } });
    const relay = later(await Relay.start(g.url), (r) => r.close());
    const hook: Array<{ sessionId: string; deadline: number }> = [];
    const p = provider(
      { url: relay.url, home: g.home },
      {
        onShutdown: async (info) => {
          hook.push(info);
          await sleep(20);
        },
      },
    );
    const lifecycle: string[] = [];
    p.on('lifecycle', (s) => lifecycle.push(s));
    await p.connect();
    const t0 = Date.now();
    await g.gateway.chatEnded('s1');
    expect(Date.now() - t0).toBeLessThan(2000); // the goodbye ended it, not the 3 s deadline
    expect(hook).toEqual([{ sessionId: 's1', deadline: 3000 }]);
    expect(lifecycle).toContain('shutdown.pending');
    expect(relay.sent('goodbye')).toEqual([{ type: 'goodbye', reason: 'session ending' }]);
  });

  it('reconnects after the gateway restarts with a new token', async () => {
    const first = await startGateway();
    const p = provider(first, { tools: [forecast] });
    const bound: string[] = [];
    const shutdowns: string[] = [];
    p.on('bound', (b) => bound.push(b.providerId));
    p.on('lifecycle', (s) => s === 'shutdown.pending' && shutdowns.push(s));
    await p.connect();
    const oldToken = first.gateway.token;
    await first.gateway.stop(); // shutdown.pending → goodbye; token file removed
    expect(shutdowns).toHaveLength(1);
    await until(() => p.state === 'reconnecting' || p.state === 'connecting', 'reconnecting');
    await sleep(100); // a few attempts against nothing

    const second = await gateway({ home: first.home, port: first.port, chats: new FakeChats() });
    expect(second.gateway.token).not.toBe(oldToken);
    await until(() => p.state === 'bound', 'bound to the new gateway');
    expect(bound).toHaveLength(2);
    expect(bound[1]).not.toBe(bound[0]);
    expect(text(await second.chats.call('s1', 'weather', 'forecast', { city: 'Tromsø' }))).toBe('Sunny in Tromsø');
  });

  it('reconnects after the connection drops, aborting the handler that was running', async () => {
    const g = await gateway();
    const relay = later(await Relay.start(g.url), (r) => r.close());
    let abortedBy: unknown;
    const p = provider(
      { url: relay.url, home: g.home },
      {
        tools: [forecast, { name: 'slow', description: '', handler: (_a, { signal }) => new Promise(() => signal.addEventListener('abort', () => (abortedBy = signal.reason))) }],
      },
    );
    const errors: string[] = [];
    p.on('error', (e) => errors.push(e.message));
    const first = await p.connect();
    const pending = g.chats.call('s1', 'weather', 'slow', {});
    await until(() => p.inFlight === 1, 'call running');
    relay.dropAll();
    expect(text(await pending)).toMatch(/^DISCONNECTED/);
    await until(() => abortedBy !== undefined, 'handler aborted');
    expect((abortedBy as ToolError).code).toBe('DISCONNECTED');
    await until(() => p.state === 'bound' && p.bound?.providerId !== first.providerId, 'bound again');
    expect(relay.connections).toBe(2);
    expect(errors.some((m) => /closed|1006/.test(m))).toBe(true);
    expect(text(await g.chats.call('s1', 'weather', 'forecast', { city: 'Oslo' }))).toBe('Sunny in Oslo');
    // the call cut off by the drop was not answered on the new connection
    expect(relay.sent('tool.result').filter((m) => m.errorCode === 'CANCELLED')).toHaveLength(0);
  });

  it('close() says goodbye, aborts handlers, rejects a pending connect and never reconnects', async () => {
    const g = await gateway();
    const relay = later(await Relay.start(g.url), (r) => r.close());
    const p = provider({ url: relay.url, home: g.home });
    await p.connect();
    await p.close('done for today');
    expect(p.state).toBe('closed');
    expect(relay.sent('goodbye')).toEqual([{ type: 'goodbye', reason: 'done for today' }]);
    await until(() => g.gateway.providers().length === 0, 'provider gone from the gateway');
    await sleep(100);
    expect(relay.connections).toBe(1);

    // close() while still trying to connect
    const nowhere = provider({ url: 'ws://127.0.0.1:9', home: g.home }, { reconnect: { initialMs: 1000 } });
    nowhere.on('error', () => {});
    const attempt = nowhere.connect();
    await nowhere.close();
    await expect(attempt).rejects.toMatchObject({ code: 'CLOSED' });
    // and it can be started again
    const again = provider({ url: relay.url, home: g.home }, { name: 'again' });
    await again.connect();
    await again.close();
    await expect(again.connect()).resolves.toMatchObject({ sessionId: 's1' });
  });

  it('a connect() nobody awaits does not leave an unhandled rejection behind close()', async () => {
    const home = (await gateway()).home;
    const p = provider({ url: 'ws://127.0.0.1:9', home });
    p.on('error', () => {});
    void p.connect();
    await p.close();
    await sleep(20); // vitest fails the run on an unhandled rejection
    expect(p.state).toBe('closed');
  });

  it('connect() right after close() (socket still closing) starts a fresh connection', async () => {
    const g = await gateway();
    const p = provider(g);
    const first = await p.connect();
    const closing = p.close();
    const second = await p.connect();
    await closing;
    expect(second.providerId).not.toBe(first.providerId);
    expect(p.state).toBe('bound');
  });

  it('an invalid gateway URL fails at once, without retrying', async () => {
    const home = (await gateway()).home;
    const p = provider({ url: 'not a url', home });
    const errors: Error[] = [];
    p.on('error', (e) => errors.push(e));
    await expect(p.connect()).rejects.toThrow(/invalid gateway URL/);
    expect(p.state).toBe('failed');
    expect(errors).toHaveLength(1);
  });

  it('with reconnect off, connect() rejects when the gateway is not there', async () => {
    const home = (await gateway()).home;
    const p = provider({ url: 'ws://127.0.0.1:9', home }, { reconnect: false });
    p.on('error', () => {});
    await expect(p.connect()).rejects.toMatchObject({ code: 'CONNECTION' });
    expect(p.state).toBe('closed');
  });

  it('gives up after reconnect.maxAttempts', async () => {
    const home = (await gateway()).home;
    const p = provider({ url: 'ws://127.0.0.1:9', home }, { reconnect: { initialMs: 5, maxMs: 10, maxAttempts: 3 } });
    const states: string[] = [];
    p.on('state', (s) => states.push(s));
    p.on('error', () => {});
    await expect(p.connect()).rejects.toMatchObject({ code: 'GAVE_UP' });
    expect(states.filter((s) => s === 'connecting')).toHaveLength(4); // the first try + 3 retries
    expect(p.state).toBe('failed');
  });
});

describe('provider SDK: what a gateway sends is checked', () => {
  it('a tool.call that breaks the schema is answered with an INTERNAL error result and reported; valid ones still run', async () => {
    const { WebSocketServer } = await import('ws');
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    later(wss, (w) => new Promise<void>((r) => w.close(() => r())));
    await new Promise<void>((r) => wss.once('listening', () => r()));
    const answers: Array<Record<string, unknown>> = [];
    wss.on('connection', (ws) =>
      ws.on('message', (raw) => {
        const m = JSON.parse(String(raw)) as Record<string, unknown>;
        if (m.type === 'auth') ws.send(JSON.stringify({ type: 'sessions', active: [{ id: 's1', label: 'chat', cwd: '/w' }] }));
        if (m.type === 'hello') {
          ws.send(JSON.stringify({ type: 'hello.ack', protocolVersion: m.protocolVersion, providerId: 'p-1', sessionId: 's1' }));
          ws.send(JSON.stringify({ type: 'tool.call', id: 'bad-1', sessionId: 's1', tool: 'forecast', args: ['Oslo'] }));
          ws.send(JSON.stringify({ type: 'tool.call', id: 'ok-1', sessionId: 's1', tool: 'forecast', args: { city: 'Oslo' } }));
        }
        if (m.type === 'tool.result') answers.push(m);
      }),
    );
    const port = (wss.address() as { port: number }).port;
    const errors: string[] = [];
    const p = provider({ url: `ws://127.0.0.1:${port}`, home: '/nonexistent' }, { token: 'ptk-test', tools: [forecast] });
    p.on('error', (e) => errors.push(e.message));
    await p.connect();
    await until(() => answers.length === 2, 'both tool.results');
    expect(answers).toEqual([
      { type: 'tool.result', id: 'bad-1', error: expect.stringMatching(/^invalid tool\.call: args/), errorCode: 'INTERNAL' },
      { type: 'tool.result', id: 'ok-1', data: 'Sunny in Oslo' },
    ]);
    expect(errors).toEqual([expect.stringMatching(/invalid tool\.call from the gateway/)]);
  });
});
