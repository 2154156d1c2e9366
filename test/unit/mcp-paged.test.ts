/**
 * Paths server-everything does not exercise, against test/fixtures/mcp-paged.mjs: pagination of
 * every list (and a looping cursor), logging/setLevel mapping, notifications/message levels,
 * tools/list_changed, and every kind of tool result content.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommandContext } from '../../src/core/chat/commands.js';
import { captureLog, ctx, fixture, makeHost, tempDir, text, waitFor, type TestHost } from '../support/mcp-helpers.js';

const log = captureLog();
const record = join(tempDir(), 'record.txt');
let t: TestHost;
const cmdCtx = { signal: new AbortController().signal } as unknown as CommandContext;

beforeAll(async () => {
  t = makeHost({ paged: { command: process.execPath, args: [fixture('mcp-paged.mjs')], env: { MCP_RECORD: record } } }, { logLevel: 'warn' });
  await t.host.start('paged');
});
afterAll(async () => {
  await t?.host.dispose();
});

describe('a paginating server', () => {
  it('lists every page of tools, prompts and resources, and stops at a looping cursor', () => {
    expect(t.tools.all().map((x) => x.name)).toEqual(['t1', 't2', 't3', 't4', 't5', 'add-tool', 'grow', 'log', 'mixed', 'structured', 'fail']);
    expect(t.commands.all().map((c) => c.name)).toEqual(['paged:p1', 'paged:p2', 'paged:two-args']);
    expect(t.host.resources().map((r) => [r.uri, r.name])).toEqual([
      ['fake://r/1', 'r1'],
      ['fake://r/2', 'r2'],
      ['fake://r/3', 'r3'],
      ['fake://a/{id}', 'A'],
      ['fake://b/{id}', 'B'],
    ]);
  });

  it('maps patchbay log level warn to MCP logging/setLevel "warning"', () => {
    expect(readFileSync(record, 'utf8').split('\n')).toContain('setLevel warning');
  });

  it('logs notifications/message at the matching patchbay level, with the server and logger names', async () => {
    const call = (level: string, msg: string) => t.tools.get('paged__log')!.call({ level, text: msg }, ctx());
    await call('warning', 'disk is slow');
    await call('critical', 'disk is gone');
    await call('notice', 'fyi');
    const lines = await waitFor(() => {
      const l = log.read().split('\n');
      return l.some((x) => x.includes('fyi')) && l;
    }, 'the log lines');
    expect(lines.find((l) => l.includes('disk is slow'))).toMatch(/ WARN \[mcp:paged\] fake-logger: disk is slow$/);
    expect(lines.find((l) => l.includes('disk is gone'))).toMatch(/ ERROR \[mcp:paged\] fake-logger: disk is gone$/);
    expect(lines.find((l) => l.includes('fyi'))).toMatch(/ INFO \[mcp:paged\] fake-logger: fyi$/);
  });

  it('adapts every content kind of a tool result', async () => {
    const r = await t.tools.get('paged__mixed')!.call({}, ctx());
    expect(r).toEqual({
      error: false,
      outputs: [
        { type: 'text', text: 'plain' },
        { type: 'image', data: Buffer.from('png!').toString('base64'), mimeType: 'image/png' },
        { type: 'text', text: '[audio audio/wav, 8 bytes]' },
        { type: 'text', text: 'embedded text' },
        { type: 'text', text: '[resource fake://bin, application/zip, 3 bytes]' },
        { type: 'text', text: '[resource link fake://r/2 (r2)]' },
      ],
    });
  });

  it('renders structuredContent as JSON when there is no text, and isError as error', async () => {
    const s = await t.tools.get('paged__structured')!.call({}, ctx());
    expect(s).toEqual({ error: false, outputs: [{ type: 'text', text: JSON.stringify({ answer: 42 }, null, 2) }] });
    const f = await t.tools.get('paged__fail')!.call({}, ctx());
    expect(f).toEqual({ error: true, outputs: [{ type: 'text', text: 'it broke' }] });
    const plain = await t.tools.get('paged__t4')!.call({ x: 1 }, ctx());
    expect(text(plain)).toBe('t4 ran with {"x":1}');
  });

  it('refreshes all pages on tools/list_changed and reports the new list', async () => {
    const before = t.events.length;
    await t.tools.get('paged__add-tool')!.call({}, ctx());
    await waitFor(() => t.tools.get('paged__extra-11'), 'the added tool');
    expect(t.tools.all()).toHaveLength(12);
    const ev = await waitFor(() => t.events.slice(before).find((e) => e.tools.some((x) => x.name === 'extra-11')), 'serverUpdated');
    expect(ev).toMatchObject({ name: 'paged', status: 'running' });
    expect(ev.tools).toHaveLength(12);
  });

  it('refreshes resources and prompts (as Commands) on their list_changed notifications', async () => {
    await t.tools.get('paged__grow')!.call({}, ctx());
    await waitFor(() => t.host.resources().some((r) => r.uri === 'fake://r/4'), 'the added resource');
    await waitFor(() => t.commands.find('paged:p4'), 'the added prompt');
    expect(t.host.resources().filter((r) => r.uri.startsWith('fake://r/'))).toHaveLength(4);
    expect(t.commands.all().map((c) => c.name)).toEqual(['paged:p1', 'paged:p2', 'paged:two-args', 'paged:p4']);
  });

  it('maps positional command arguments onto prompt arguments in order', async () => {
    const cmd = t.commands.find('paged:two-args')!;
    expect(cmd.arguments).toEqual([
      { name: 'a', required: true },
      { name: 'b', required: false },
    ]);
    expect(await cmd.run(['x'], cmdCtx)).toEqual({
      kind: 'prompt',
      userText: '/paged:two-args x',
      contextText: 'user: prompt two-args args {"a":"x"}\n\nassistant: embedded text',
    });
    const both = await cmd.run(['x', 'y z'], cmdCtx);
    expect(both).toMatchObject({ userText: '/paged:two-args x y z', contextText: expect.stringContaining('{"a":"x","b":"y z"}') });
  });

  it('reads a resource of a server without subscribe capability and never marks it updated', async () => {
    const ref = { server: 'paged', uri: 'fake://r/2' };
    expect(await t.host.readResource(ref, new AbortController().signal)).toBe('content of fake://r/2');
    expect(t.host.updatedSince([ref])).toEqual([]);
    expect(existsSync(record) && readFileSync(record, 'utf8')).not.toMatch(/subscribe/);
  });

  it('returns the instructions from initialize', () => {
    expect(t.host.instructions()).toEqual(['Instructions from MCP server paged:\nUse t1 before t2.']);
  });
});
