/**
 * Wire schemas of the provider gateway core profile (specs/tap-provider-gateway.md "Messages"; its
 * "Payload limits" and "Error codes" tables are vendored in test/fixtures/specs/).
 */
import { describe, expect, it } from 'vitest';
import {
  FATAL_ERROR_CODES,
  MAX_TOOLS,
  OTHER_MAX,
  PROTOCOL_VERSION,
  TOOL_RESULT_MAX,
  gatewayErrorCodeSchema,
  gatewayMessageSchema,
  maxMessageBytes,
  providerMessageSchema,
  toolDefSchema,
  toolResultMessageSchema,
} from '../../src/protocol/gateway/index.js';
import { specTable } from '../support/spec-excerpt.js';

describe('gateway wire schemas', () => {
  it('has the limits of the spec', () => {
    expect([PROTOCOL_VERSION, TOOL_RESULT_MAX, OTHER_MAX, MAX_TOOLS]).toEqual([2, 5 * 1024 * 1024, 2 * 1024 * 1024, 100]);
    expect(maxMessageBytes('tool.result')).toBe(TOOL_RESULT_MAX);
    expect(maxMessageBytes('push')).toBe(OTHER_MAX);
    expect(gatewayErrorCodeSchema.options).toHaveLength(8);
  });

  it('has the limits of the spec’s "Payload limits" table', () => {
    const mb = (v: string) => Number(/^(\d+) MB$/.exec(v)?.[1]) * 1024 * 1024;
    const limits = new Map(specTable('tap-provider-gateway.md', '### Payload limits').map(([what, value]) => [what, value ?? '']));
    expect(limits.size).toBe(3);
    expect(TOOL_RESULT_MAX).toBe(mb(limits.get('`tool.result` max size') ?? ''));
    expect(OTHER_MAX).toBe(mb(limits.get('All other messages') ?? ''));
    expect(MAX_TOOLS).toBe(Number(limits.get('Max tools per provider')));
  });

  it('has exactly the codes of the spec’s "Error codes" table, the fatal ones marked', () => {
    const rows = specTable('tap-provider-gateway.md', '## Error codes').map(([code, fatal]) => ({ code: code?.replaceAll('`', ''), fatal: fatal === '**Yes**' }));
    expect([...gatewayErrorCodeSchema.options].sort()).toEqual(rows.map((r) => r.code).sort());
    expect([...FATAL_ERROR_CODES].sort()).toEqual(
      rows
        .filter((r) => r.fatal)
        .map((r) => r.code)
        .sort(),
    );
  });

  it('keeps unknown fields (forward compatibility)', () => {
    const r = providerMessageSchema.parse({ type: 'goodbye', reason: 'bye', future: { x: 1 } });
    expect(r).toEqual({ type: 'goodbye', reason: 'bye', future: { x: 1 } });
  });

  it('rejects unknown provider types', () => {
    expect(providerMessageSchema.safeParse({ type: 'subscribe' }).success).toBe(false);
  });

  it('tool.result needs exactly one of data or error', () => {
    expect(toolResultMessageSchema.safeParse({ type: 'tool.result', id: 'a', data: 'x' }).success).toBe(true);
    expect(toolResultMessageSchema.safeParse({ type: 'tool.result', id: 'a', data: null }).success).toBe(true);
    expect(toolResultMessageSchema.safeParse({ type: 'tool.result', id: 'a', error: 'no', errorCode: 'NOT_FOUND' }).success).toBe(true);
    expect(toolResultMessageSchema.safeParse({ type: 'tool.result', id: 'a' }).success).toBe(false);
    expect(toolResultMessageSchema.safeParse({ type: 'tool.result', id: 'a', data: 1, error: 'x' }).success).toBe(false);
    expect(providerMessageSchema.safeParse({ type: 'tool.result', id: 'a' }).success).toBe(false);
  });

  it('validates tool definitions', () => {
    const ok = { name: 'greet', description: 'Say hello', parameters: { type: 'object', properties: {} } };
    expect(toolDefSchema.safeParse(ok).success).toBe(true);
    expect(toolDefSchema.safeParse({ ...ok, timeout: 500 }).success).toBe(true);
    expect(toolDefSchema.safeParse({ ...ok, timeout: -1 }).success).toBe(false);
    expect(toolDefSchema.safeParse({ ...ok, name: 'has space' }).success).toBe(false);
    expect(toolDefSchema.safeParse({ ...ok, name: 'x'.repeat(65) }).success).toBe(false);
    expect(toolDefSchema.safeParse({ ...ok, parameters: { type: 'string' } }).success).toBe(false);
  });

  it('parses every gateway → provider type', () => {
    const msgs = [
      { type: 'sessions', active: [{ id: 'c1', label: 'Chat', cwd: '/x' }] },
      { type: 'hello.ack', protocolVersion: 2, providerId: 'p-1', sessionId: 'c1' },
      { type: 'tool.call', id: '1', sessionId: 'c1', tool: 'greet', args: {} },
      { type: 'tool.cancel', id: '1', sessionId: 'c1', reason: 'timeout' },
      { type: 'session.lifecycle', sessionId: 'c1', state: 'shutdown.pending', deadline: 10000 },
      { type: 'error', code: 'INVALID_SESSION', message: 'no', replyTo: 'hello' },
    ];
    for (const m of msgs) expect(gatewayMessageSchema.parse(m)).toEqual(m);
  });
});
