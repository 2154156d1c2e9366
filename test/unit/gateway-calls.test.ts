/** Tool calls and their terminal semantics 1–4 (spec "Tool call terminal semantics"). */
import { describe, expect, it } from 'vitest';
import type { ToolResult } from '../../src/shapes/tool.js';
import { Client, ctx, greet, startGateway, text, type Msg, type TestGateway } from '../support/gateway-helpers.js';

async function bound(t: TestGateway, tools: unknown[] = [greet()]): Promise<Client> {
  const c = await Client.open(t.url);
  await c.bind(t, 'prov', tools);
  await c.next('session.lifecycle');
  return c;
}

/** Starts a call of `prov/<tool>` and waits for the provider to receive it. */
async function call(t: TestGateway, c: Client, args: Record<string, unknown> = { who: 'Ada' }, signal?: AbortSignal, tool = 'greet') {
  const result = t.chats.tool('chat-1', 'prov', tool).call(args, ctx(signal));
  const msg = await c.next('tool.call');
  return { result, msg, id: msg.id as string };
}

function settledYet(p: Promise<ToolResult>): Promise<boolean> {
  return Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 50))]);
}

describe('gateway tool calls', () => {
  it('sends tool.call {id, sessionId, tool, args} and returns the data as text', async () => {
    const t = await startGateway();
    const c = await bound(t);
    const { result, msg, id } = await call(t, c);
    expect(msg).toEqual({ type: 'tool.call', id, sessionId: 'chat-1', tool: 'greet', args: { who: 'Ada' } });
    c.send({ type: 'tool.result', id, data: 'Hello, Ada!' });
    expect(await result).toEqual({ error: false, outputs: [{ type: 'text', text: 'Hello, Ada!' }] });
  });

  it('stringifies non-string data', async () => {
    const t = await startGateway();
    const c = await bound(t);
    const { result, id } = await call(t, c);
    c.send({ type: 'tool.result', id, data: { n: 1, list: [true, null] } });
    expect(text(await result)).toBe('{"n":1,"list":[true,null]}');
  });

  it('error + errorCode → an error result "errorCode: error"', async () => {
    const t = await startGateway();
    const c = await bound(t);
    const { result, id } = await call(t, c);
    c.send({ type: 'tool.result', id, error: 'No such user', errorCode: 'NOT_FOUND' });
    const r = await result;
    expect(r.error).toBe(true);
    expect(text(r)).toBe('NOT_FOUND: No such user');
  });

  it('rule 1: the first result wins, later duplicates are ignored silently', async () => {
    const t = await startGateway();
    const c = await bound(t);
    const { result, id } = await call(t, c);
    c.send({ type: 'tool.result', id, data: 'first' });
    c.send({ type: 'tool.result', id, data: 'second' });
    c.send({ type: 'tool.result', id, error: 'third', errorCode: 'INTERNAL' });
    expect(text(await result)).toBe('first');
    // Nothing comes back for the duplicates and the provider stays bound.
    const next = await call(t, c);
    c.send({ type: 'tool.result', id: next.id, data: 'ok' });
    expect(text(await next.result)).toBe('ok');
    expect(c.inbox).toEqual([]);
  });

  it('calls run concurrently and are correlated by id', async () => {
    const t = await startGateway();
    const c = await bound(t);
    const a = await call(t, c, { who: 'a' });
    const b = await call(t, c, { who: 'b' });
    c.send({ type: 'tool.result', id: b.id, data: 'B' });
    c.send({ type: 'tool.result', id: a.id, data: 'A' });
    expect([text(await a.result), text(await b.result)]).toEqual(['A', 'B']);
  });

  it('rule 2: abort (promptStop) sends tool.cancel "cancelled" and settles CANCELLED at once; a later result is ignored', async () => {
    const t = await startGateway();
    const c = await bound(t);
    const ac = new AbortController();
    const { result, id } = await call(t, c, {}, ac.signal);
    ac.abort();
    const r = await result; // settles without any reply from the provider
    expect(r.error).toBe(true);
    expect(text(r)).toMatch(/^CANCELLED: /);
    expect(await c.next('tool.cancel')).toEqual({ type: 'tool.cancel', id, sessionId: 'chat-1', reason: 'cancelled' });
    c.send({ type: 'tool.result', id, data: 'too late' });
    c.send({ type: 'tool.result', id, error: 'Cancelled', errorCode: 'CANCELLED' });
    const again = await call(t, c);
    c.send({ type: 'tool.result', id: again.id, data: 'fine' });
    expect(text(await again.result)).toBe('fine');
    expect(c.inbox).toEqual([]);
  });

  it('an already aborted call is never sent', async () => {
    const t = await startGateway();
    const c = await bound(t);
    const ac = new AbortController();
    ac.abort();
    const r = await t.chats.tool('chat-1', 'prov', 'greet').call({}, ctx(ac.signal));
    expect(text(r)).toMatch(/^CANCELLED: /);
    await expect(c.next('tool.call', 100)).rejects.toThrow(/timed out/);
  });

  it('rule 2: the tool\'s timeout sends tool.cancel "timeout" and settles CANCELLED', async () => {
    const t = await startGateway();
    const c = await bound(t, [greet('slow', { timeout: 80 })]);
    const started = Date.now();
    const { result, id } = await call(t, c, {}, undefined, 'slow');
    const r = await result;
    expect(Date.now() - started).toBeGreaterThanOrEqual(70);
    expect(r.error).toBe(true);
    expect(text(r)).toMatch(/^CANCELLED: .*timed out after 80 ms/);
    expect(await c.next('tool.cancel')).toEqual({ type: 'tool.cancel', id, sessionId: 'chat-1', reason: 'timeout' });
  });

  it('one deadline timer serves every call: a short timeout started after a long one still fires on time, answered calls leave the rest alone', async () => {
    const t = await startGateway();
    const c = await bound(t, [greet('long', { timeout: 2_000 }), greet('short', { timeout: 100 })]);
    const long = await call(t, c, {}, undefined, 'long');
    const answered = await call(t, c, {}, undefined, 'short');
    c.send({ type: 'tool.result', id: answered.id, data: 'in time' });
    expect(text(await answered.result)).toBe('in time');
    const started = Date.now();
    const short = await call(t, c, {}, undefined, 'short');
    expect(text(await short.result)).toMatch(/timed out after 100 ms/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect((await c.next('tool.cancel')).id).toBe(short.id);
    expect(await settledYet(long.result)).toBe(false);
    c.send({ type: 'tool.result', id: long.id, data: 'slow but fine' });
    expect(text(await long.result)).toBe('slow but fine');
  });

  it('a timeout beyond what a timer can hold (2^31 ms) neither fires early nor spins', async () => {
    const t = await startGateway();
    const c = await bound(t, [greet('patient', { timeout: 1e12 })]);
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const { result, id } = await call(t, c, {}, undefined, 'patient');
      expect(await settledYet(result)).toBe(false);
      c.send({ type: 'tool.result', id, data: 'took my time' });
      expect(text(await result)).toBe('took my time');
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('TimeoutOverflowWarning');
  });

  it('aborting a signal cancels exactly the pending calls made with it, each time it is used again', async () => {
    const t = await startGateway();
    const c = await bound(t);
    const turn = new AbortController();
    const other = new AbortController();
    const first = await call(t, c, {}, turn.signal);
    c.send({ type: 'tool.result', id: first.id, data: 'done' });
    expect(text(await first.result)).toBe('done');
    const a = await call(t, c, {}, turn.signal);
    const b = await call(t, c, {}, turn.signal);
    const kept = await call(t, c, {}, other.signal);
    turn.abort();
    expect(text(await a.result)).toMatch(/^CANCELLED: /);
    expect(text(await b.result)).toMatch(/^CANCELLED: /);
    const cancels = [await c.next('tool.cancel'), await c.next('tool.cancel')].map((m) => m.id).sort();
    expect(cancels).toEqual([a.id, b.id].sort());
    expect(await settledYet(kept.result)).toBe(false);
    c.send({ type: 'tool.result', id: kept.id, data: 'unaffected' });
    expect(text(await kept.result)).toBe('unaffected');
  });

  it('a result with data and an errorCode, or with data and error, is judged by the full schema', async () => {
    const t = await startGateway();
    const c = await bound(t);
    const one = await call(t, c);
    c.send({ type: 'tool.result', id: one.id, data: 'x', error: 'y' });
    expect(text(await one.result)).toMatch(/^INVALID_JSON: .*exactly one of "data" or "error"/);
    const two = await call(t, c);
    c.send({ type: 'tool.result', id: two.id, data: 'partial', errorCode: 'PARTIAL' });
    expect(text(await two.result)).toBe('partial');
  });

  it('the default timeout applies when the tool declares none', async () => {
    const t = await startGateway({}, { defaultToolTimeoutMs: 60 });
    const c = await bound(t);
    const { result, id } = await call(t, c);
    expect(text(await result)).toMatch(/timed out after 60 ms/);
    expect((await c.next('tool.cancel')).id).toBe(id);
  });

  it('rule 3: a provider that disconnects fails its in-flight calls with DISCONNECTED, and its tools go', async () => {
    const t = await startGateway();
    const c = await bound(t);
    const a = await call(t, c);
    const b = await call(t, c);
    c.ws.terminate();
    for (const r of [await a.result, await b.result]) {
      expect(r.error).toBe(true);
      expect(text(r)).toMatch(/^DISCONNECTED: /);
    }
    await expect.poll(() => t.chats.tools.size).toBe(0);
    expect(t.chats.setToolsCalls.at(-1)).toEqual({ chatId: 'chat-1', provider: 'prov', names: [] });
    expect(t.chats.announced.at(-1)).toEqual({ chatId: 'chat-1', providers: [] });
    expect(t.gateway.providers()).toEqual([]);
  });

  it('goodbye: clean disconnect, in-flight calls DISCONNECTED, later calls DISCONNECTED at once', async () => {
    const t = await startGateway();
    const c = await bound(t);
    const tool = t.chats.tool('chat-1', 'prov', 'greet');
    const a = await call(t, c);
    c.send({ type: 'goodbye', reason: 'done' });
    expect(text(await a.result)).toMatch(/^DISCONNECTED: .*goodbye: done/);
    expect((await c.closed).code).toBe(1000);
    expect(text(await tool.call({}, ctx()))).toMatch(/^DISCONNECTED: /);
  });

  describe('rule 4: an uncorrelatable message while calls are pending', () => {
    it('with one pending call: that call fails with the protocol error, the provider stays', async () => {
      const t = await startGateway();
      const c = await bound(t);
      const { result } = await call(t, c);
      c.send('{"type":"tool.result","id":');
      const r = await result;
      expect(r.error).toBe(true);
      expect(text(r)).toMatch(/^INVALID_JSON: message is not valid JSON/);
      expect(await c.next('error')).toMatchObject({ code: 'INVALID_JSON' });
      expect(c.isClosed).toBe(false);
      const next = await call(t, c);
      c.send({ type: 'tool.result', id: next.id, data: 'still here' });
      expect(text(await next.result)).toBe('still here');
    });

    it('with one pending call: an invalid tool.result without a usable id fails it', async () => {
      const t = await startGateway();
      const c = await bound(t);
      const { result } = await call(t, c);
      c.send({ type: 'tool.result', data: 'no id' });
      expect(text(await result)).toMatch(/^INVALID_JSON: invalid tool\.result: tool\.result\.id/);
      expect(await c.next('error')).toMatchObject({ code: 'INVALID_JSON', replyTo: 'tool.result' });
    });

    it('with several pending calls: the provider is disconnected and all fail DISCONNECTED', async () => {
      const t = await startGateway();
      const c = await bound(t);
      const a = await call(t, c);
      const b = await call(t, c);
      c.send('not json at all');
      expect(await c.next('error')).toMatchObject({ code: 'INVALID_JSON' });
      expect((await c.closed).code).toBe(1002);
      expect(text(await a.result)).toMatch(/^DISCONNECTED: /);
      expect(text(await b.result)).toMatch(/^DISCONNECTED: /);
      expect(t.chats.tools.size).toBe(0);
    });

    it('an invalid tool.result whose id is pending fails just that call', async () => {
      const t = await startGateway();
      const c = await bound(t);
      const a = await call(t, c);
      const b = await call(t, c);
      c.send({ type: 'tool.result', id: a.id }); // neither data nor error
      expect(text(await a.result)).toMatch(/^INVALID_JSON: .*exactly one of "data" or "error"/);
      expect(await settledYet(b.result)).toBe(false);
      c.send({ type: 'tool.result', id: b.id, data: 'b' });
      expect(text(await b.result)).toBe('b');
    });

    it('with no pending call a malformed message is only an INVALID_JSON error', async () => {
      const t = await startGateway();
      const c = await bound(t);
      const e = await c.expectError('{oops', 'INVALID_JSON');
      expect(e.providerId).toMatch(/^p-/);
      await c.expectError('[1,2]', 'INVALID_JSON');
      await c.expectError('{"no":"type"}', 'INVALID_JSON');
      expect(c.isClosed).toBe(false);
      expect(t.gateway.providers()).toHaveLength(1);
    });

    it('an unknown type while calls are pending is not ambiguous (forward compatibility)', async () => {
      const t = await startGateway();
      const c = await bound(t);
      const a = await call(t, c);
      const b = await call(t, c);
      await c.expectError({ type: 'tool.progress', id: a.id, pct: 50 }, 'UNKNOWN_TYPE');
      expect(await settledYet(a.result)).toBe(false);
      c.send({ type: 'tool.result', id: a.id, data: 'a' });
      c.send({ type: 'tool.result', id: b.id, data: 'b' });
      expect([text(await a.result), text(await b.result)]).toEqual(['a', 'b']);
    });
  });

  it('tools.update during a call: the call goes on and completes; new calls see the new list', async () => {
    const t = await startGateway();
    const c = await bound(t, [greet('old')]);
    const oldTool = t.chats.tool('chat-1', 'prov', 'old');
    const pending = await call(t, c, {}, undefined, 'old');
    c.send({ type: 'tools.update', tools: [greet('new')] });
    await expect.poll(() => t.chats.tools.get('chat-1/prov')?.map((x) => x.name)).toEqual(['new']);
    expect(await settledYet(pending.result)).toBe(false);
    c.send({ type: 'tool.result', id: pending.id, data: 'old result' });
    expect(text(await pending.result)).toBe('old result');
    const fresh = await call(t, c, {}, undefined, 'new');
    expect(fresh.msg.tool).toBe('new');
    c.send({ type: 'tool.result', id: fresh.id, data: 'new result' });
    expect(text(await fresh.result)).toBe('new result');
    // A snapshot of the removed tool still reaches the provider, which may answer NOT_FOUND.
    const stale = oldTool.call({}, ctx());
    const m: Msg = await c.next('tool.call');
    c.send({ type: 'tool.result', id: m.id, error: 'unknown tool', errorCode: 'NOT_FOUND' });
    expect(text(await stale)).toBe('NOT_FOUND: unknown tool');
  });
});
