/** hello / tools.update / forward compatibility (spec `hello`, `tools.update`, "Protocol rules"). */
import { describe, expect, it } from 'vitest';
import { Client, greet, startGateway, type TestGateway } from '../support/gateway-helpers.js';

async function authed(t: TestGateway): Promise<Client> {
  const c = await Client.open(t.url);
  await c.auth(t.gateway.token);
  return c;
}

const hello = (extra: Record<string, unknown> = {}) => ({ type: 'hello', name: 'prov', protocolVersion: 2, session: 'chat-1', tools: [greet()], ...extra });

describe('gateway hello', () => {
  it('binds: hello.ack, session.lifecycle started, tools registered as internal Tools', async () => {
    const t = await startGateway();
    const c = await authed(t);
    c.send(hello({ tools: [greet('greet', { timeout: 1500 }), greet('wave')] }));
    const ack = await c.next();
    expect(ack).toMatchObject({ type: 'hello.ack', protocolVersion: 2, sessionId: 'chat-1' });
    expect(ack.providerId).toMatch(/^p-[0-9a-f]+$/);
    expect(await c.next()).toEqual({ type: 'session.lifecycle', sessionId: 'chat-1', state: 'started' });
    const tool = t.chats.tool('chat-1', 'prov', 'greet');
    expect(tool).toMatchObject({
      name: 'greet',
      server: 'prov',
      origin: 'provider',
      description: 'tool greet',
      readOnly: false,
      mutates: true,
      inputSchema: { type: 'object', properties: { who: { type: 'string' } } },
    });
    expect(t.chats.setToolsCalls).toEqual([{ chatId: 'chat-1', provider: 'prov', names: ['greet', 'wave'] }]);
    expect(t.chats.announced).toHaveLength(1);
    expect(t.chats.announced[0]).toMatchObject({ chatId: 'chat-1', providers: [{ name: 'prov', providerId: ack.providerId }] });
    expect(t.gateway.providers()).toEqual([{ name: 'prov', providerId: ack.providerId, chatId: 'chat-1', tools: 2 }]);
  });

  it('binds without tools', async () => {
    const t = await startGateway();
    const c = await authed(t);
    c.send(hello({ tools: undefined }));
    await c.next('hello.ack');
    expect(t.gateway.providers()[0].tools).toBe(0);
  });

  it('UNSUPPORTED_VERSION is fatal: error, then close', async () => {
    const t = await startGateway();
    const c = await authed(t);
    const e = await c.expectError(hello({ protocolVersion: 3 }), 'UNSUPPORTED_VERSION');
    expect(e).toMatchObject({ replyTo: 'hello' });
    expect((await c.closed).code).toBe(1002);
    expect(t.chats.setToolsCalls).toEqual([]);
  });

  it('INVALID_SESSION is not fatal: the provider picks another session', async () => {
    const t = await startGateway();
    const c = await authed(t);
    const e = await c.expectError(hello({ session: 'nope' }), 'INVALID_SESSION');
    expect(e.replyTo).toBe('hello');
    expect(e.message).toContain('nope');
    c.send(hello({ session: 'chat-2' }));
    expect(await c.next('hello.ack')).toMatchObject({ sessionId: 'chat-2' });
  });

  it('TOOL_CONFLICT: a second provider of the same name in the same chat', async () => {
    const t = await startGateway();
    const a = await Client.open(t.url);
    await a.bind(t, 'prov');
    const b = await authed(t);
    const e = await b.expectError(hello(), 'TOOL_CONFLICT');
    expect(e.replyTo).toBe('hello');
    // Same name, another chat: fine.
    b.send(hello({ session: 'chat-2' }));
    await b.next('hello.ack');
    expect(
      t.gateway
        .providers()
        .map((p) => p.chatId)
        .sort(),
    ).toEqual(['chat-1', 'chat-2']);
  });

  it('TOOL_CONFLICT: duplicate tool names within the list', async () => {
    const t = await startGateway();
    const c = await authed(t);
    await c.expectError(hello({ tools: [greet(), greet()] }), 'TOOL_CONFLICT');
    c.send(hello());
    await c.next('hello.ack');
  });

  it('the name is free again once its provider leaves', async () => {
    const t = await startGateway();
    const a = await Client.open(t.url);
    await a.bind(t, 'prov');
    a.send({ type: 'goodbye' });
    await a.closed;
    const b = await Client.open(t.url);
    await b.bind(t, 'prov');
  });

  it('caps a provider at 100 tools: PAYLOAD_TOO_LARGE', async () => {
    const t = await startGateway();
    const c = await authed(t);
    const many = (n: number) => Array.from({ length: n }, (_, i) => greet(`t${i}`));
    const e = await c.expectError(hello({ tools: many(101) }), 'PAYLOAD_TOO_LARGE');
    expect(e.message).toMatch(/101 tools.*at most 100/);
    c.send(hello({ tools: many(100) }));
    await c.next('hello.ack');
    expect(t.chats.tools.get('chat-1/prov')).toHaveLength(100);
  });

  it('rejects bad tool definitions with INVALID_JSON and a usable message', async () => {
    const t = await startGateway();
    const c = await authed(t);
    const cases: Array<[unknown, RegExp]> = [
      [{ ...greet(), name: '' }, /tools\.0\.name/],
      [{ ...greet(), name: 'has space' }, /tools\.0\.name/],
      [{ ...greet(), name: 'x'.repeat(65) }, /tools\.0\.name/],
      [{ name: 'nodesc', parameters: { type: 'object' } }, /description/],
      [{ ...greet(), parameters: { type: 'string' } }, /parameters/],
      [{ ...greet(), parameters: { type: 'object', properties: 5 } }, /not a valid JSON Schema/],
      [{ ...greet(), parameters: { type: 'object', properties: { a: { type: 'bogus' } } } }, /not a valid JSON Schema/],
      [{ ...greet(), parameters: { type: 'object', properties: { a: { type: 'string', pattern: '(' } } } }, /not a valid JSON Schema/],
      [{ ...greet(), parameters: { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } } }, /not a valid JSON Schema/],
      [{ ...greet(), timeout: -5 }, /timeout/],
    ];
    for (const [tool, pattern] of cases) {
      const e = await c.expectError(hello({ tools: [tool] }), 'INVALID_JSON');
      expect(e.message).toMatch(pattern);
    }
    // Still AwaitHello: a good hello binds.
    c.send(hello());
    await c.next('hello.ack');
  });

  it('accepts real-world schemas: $defs refs, 2020-12 and draft-07 $schema, unknown keywords', async () => {
    const t = await startGateway();
    const c = await authed(t);
    const params = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { a: { $ref: '#/$defs/A' }, b: { type: 'string', format: 'made-up', 'x-ui': 1 } },
      $defs: { A: { type: 'array', prefixItems: [{ type: 'number' }] } },
      additionalProperties: false,
    };
    const draft7 = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', definitions: { X: { type: 'string' } }, properties: { x: { $ref: '#/definitions/X' } } };
    c.send(hello({ tools: [greet('a', { parameters: params }), greet('b', { parameters: draft7 })] }));
    await c.next('hello.ack');
  });

  it('rejects a provider name that cannot prefix LLM tool names', async () => {
    const t = await startGateway();
    const c = await authed(t);
    const e = await c.expectError(hello({ name: 'my provider' }), 'INVALID_JSON');
    expect(e.message).toContain('hello.name');
  });

  it('ignores unknown fields (forward compatibility)', async () => {
    const t = await startGateway();
    const c = await authed(t);
    c.send(hello({ future: { x: 1 }, tools: [greet('greet', { icon: 'wave' })] }));
    await c.next('hello.ack');
  });

  it('UNKNOWN_TYPE for unknown provider types and misplaced known ones, not fatal', async () => {
    const t = await startGateway();
    const c = await authed(t);
    let e = await c.expectError({ type: 'push', level: 'keep', event: 'early' }, 'UNKNOWN_TYPE');
    expect(e.message).toContain('AwaitHello');
    const ack = await (async () => {
      c.send(hello());
      return c.next('hello.ack');
    })();
    e = await c.expectError({ type: 'subscribe', topic: 'x' }, 'UNKNOWN_TYPE');
    expect(e).toMatchObject({ replyTo: 'subscribe', providerId: ack.providerId, sessionId: 'chat-1' });
    e = await c.expectError(hello(), 'UNKNOWN_TYPE');
    expect(e.message).toContain('Bound');
    e = await c.expectError({ type: 'auth', token: t.gateway.token }, 'UNKNOWN_TYPE');
    expect(c.isClosed).toBe(false);
    expect(t.gateway.providers()).toHaveLength(1);
  });
});

describe('gateway tools.update', () => {
  it('replaces the list atomically', async () => {
    const t = await startGateway();
    const c = await Client.open(t.url);
    await c.bind(t, 'prov', [greet('a'), greet('b')]);
    c.send({ type: 'tools.update', tools: [greet('c')] });
    c.send({ type: 'push', level: 'keep', event: 'sync' }); // FIFO: once this is seen, the update was applied
    await expect.poll(() => t.chats.pushes.length).toBe(1);
    expect(t.chats.setToolsCalls.map((s) => s.names)).toEqual([['a', 'b'], ['c']]);
    expect(t.chats.announced.at(-1)!.providers[0].tools.map((x) => x.name)).toEqual(['c']);
    expect(t.gateway.providers()[0].tools).toBe(1);
  });

  it('on failure sends error and keeps the previous list', async () => {
    const t = await startGateway();
    const c = await Client.open(t.url);
    await c.bind(t, 'prov', [greet('a')]);
    await c.expectError({ type: 'tools.update', tools: [greet('x'), greet('x')] }, 'TOOL_CONFLICT');
    await c.expectError({ type: 'tools.update', tools: Array.from({ length: 101 }, (_, i) => greet(`t${i}`)) }, 'PAYLOAD_TOO_LARGE');
    await c.expectError({ type: 'tools.update', tools: [{ ...greet('y'), parameters: { type: 'object', required: 'y' } }] }, 'INVALID_JSON');
    await c.expectError({ type: 'tools.update', sessionId: 'chat-2', tools: [greet('z')] }, 'INVALID_SESSION');
    expect(t.chats.setToolsCalls.map((s) => s.names)).toEqual([['a']]);
    expect(t.chats.tool('chat-1', 'prov', 'a').name).toBe('a');
  });
});
