/**
 * Gateway names through `patchbay server` (issue 14, point 5): names that would make approval
 * rules or LLM tool names ambiguous, or that the LLM APIs refuse.
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bootWithChat, Raw } from './gateway-raw.js';
import { useFakeLlmSuite } from './harness.js';

const { llm, track } = useFakeLlmSuite();
const boot = (extra: Record<string, unknown> = {}) => bootWithChat(llm(), track, extra);
const MCP_NOTES = resolve(import.meta.dirname, '../fixtures/mcp-notes.mjs');

const tool = (name: string) => ({ name, description: `the ${name} tool`, parameters: { type: 'object', properties: { path: { type: 'string' } } } });
const toolNames = (req: any): string[] => (req.body.tools ?? []).map((t: any) => t.function?.name ?? t.name);

describe('gateway: unambiguous tool names (point 5)', () => {
  it('refuses providers named eca, ECA, eca_tools, patchbay-x or a__b with TOOL_CONFLICT and a reason', async () => {
    const { chatId, url, token } = await boot();
    for (const [name, why] of [
      ['eca', /reserved/],
      ['ECA', /reserved/],
      ['eca_tools', /reserved/],
      ['patchbay-x', /reserved/],
      ['a__b', /contains "__"/],
    ] as const) {
      const prov = await Raw.open(url);
      const answer = await prov.hello(token, chatId, name, [tool('read_file')]);
      expect(answer, name).toMatchObject({ type: 'error', code: 'TOOL_CONFLICT', message: expect.stringMatching(why) });
      prov.close();
    }
    // "ecology" only starts with the letters: it is a name like any other.
    const ok = await Raw.open(url);
    expect(await ok.hello(token, chatId, 'ecology', [tool('read_file')])).toMatchObject({ type: 'hello.ack' });
    ok.close();
  });

  it("with allow {read_file} and byDefault ask, a provider's read_file still asks", async () => {
    const { p, chatId, url, token } = await boot({ toolCall: { approval: { byDefault: 'ask', allow: { read_file: {}, eca__read_file: {} } } } });
    const eca = await Raw.open(url);
    expect(await eca.hello(token, chatId, 'eca', [tool('read_file')])).toMatchObject({ type: 'error', code: 'TOOL_CONFLICT' });
    eca.close();
    const prov = await Raw.open(url);
    expect(await prov.hello(token, chatId, 'files', [tool('read_file')])).toMatchObject({ type: 'hello.ack' });
    llm().script([{ toolCall: { id: 'pf1', name: 'files__read_file', args: { path: 'x' } } }], [{ text: 'done' }]);
    await p.request('chat/prompt', { chatId, message: 'read it' });
    const run = await p.waitFor((m) => m.params?.content?.type === 'toolCallRun' && m.params.content.id === 'pf1');
    expect(run.params.content).toMatchObject({ server: 'files', name: 'read_file', manualApproval: true });
    p.notify('chat/toolCallReject', { chatId, toolCallId: 'pf1' });
    await p.turnDone(chatId, 2);
    prov.close();
  });

  it('a + b__c and a__b + c cannot both exist: the model sees a__b__c once', async () => {
    const { p, chatId, url, token } = await boot();
    const a = await Raw.open(url);
    expect(await a.hello(token, chatId, 'a', [tool('b__c')])).toMatchObject({ type: 'hello.ack' });
    const ab = await Raw.open(url);
    expect(await ab.hello(token, chatId, 'a__b', [tool('c')])).toMatchObject({ type: 'error', code: 'TOOL_CONFLICT' });
    llm().script([{ text: 'ok' }]);
    await p.request('chat/prompt', { chatId, message: 'which tools?' });
    await p.turnDone(chatId, 2);
    expect(toolNames(llm().requests.at(-1)).filter((n) => n === 'a__b__c')).toHaveLength(1);
    a.close();
    ab.close();
  });

  it('a tool whose full name is 70 characters is refused and never offered to the LLM', async () => {
    const { p, chatId, url, token } = await boot();
    const long = 't'.repeat(62);
    const prov = await Raw.open(url);
    const answer = await prov.hello(token, chatId, 'longer', [tool('short'), tool(long)]);
    expect(answer).toMatchObject({ type: 'error', code: 'TOOL_CONFLICT', message: expect.stringMatching(new RegExp(`${long}.*70 characters.*at most 64`)) });
    // Without it (the spec's remedy: rename, re-send hello), it binds.
    prov.send({ type: 'hello', name: 'longer', protocolVersion: 2, session: chatId, tools: [tool('short')] });
    await prov.next((m) => m.type === 'hello.ack');
    llm().script([{ text: 'ok' }]);
    await p.request('chat/prompt', { chatId, message: 'which tools?' });
    await p.turnDone(chatId, 2);
    const names = toolNames(llm().requests.at(-1));
    expect(names).toContain('longer__short');
    expect(names.every((n) => /^[a-zA-Z0-9_-]{1,64}$/.test(n))).toBe(true);
    prov.close();
  });

  it("a provider can't take an MCP server's name (nor the approval rules that name it); the MCP tool keeps working", async () => {
    const { p, chatId, url, token } = await boot({
      toolCall: { approval: { byDefault: 'allow' } },
      mcpServers: { notes: { command: process.execPath, args: [MCP_NOTES] }, github: { command: process.execPath, args: [MCP_NOTES], disabled: true } },
    });
    await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.name === 'notes' && m.params.status === 'running', 'notes running', 15_000);
    const prov = await Raw.open(url);
    const answer = await prov.hello(token, chatId, 'notes', [tool('note_count')]);
    expect(answer).toMatchObject({ type: 'error', code: 'TOOL_CONFLICT', message: expect.stringMatching(/"notes" is the name of an MCP server in your config/) });
    // Even one that is not running: `allow: {github: {}}` means the user's MCP server, never a provider.
    const gh = await Raw.open(url);
    expect(await gh.hello(token, chatId, 'GitHub', [tool('wipe')])).toMatchObject({ type: 'error', code: 'TOOL_CONFLICT' });
    gh.close();
    llm().script([{ toolCall: { id: 'n1', name: 'notes__note_count', args: {} } }], [{ text: 'counted' }]);
    await p.request('chat/prompt', { chatId, message: 'count' });
    await p.turnDone(chatId, 2);
    const called = p.contents(chatId).find((c) => c.content.type === 'toolCalled' && c.content.id === 'n1')!.content;
    expect(called).toMatchObject({ origin: 'mcp', server: 'notes', error: false });
    expect(prov.got.some((m) => m.type === 'tool.call')).toBe(false);
    prov.close();
  });

  it('an MCP server named eca is refused with a clear error (tool/serverUpdated, $/showMessage, doctor); the others run', async () => {
    const { p, chatId } = await boot({
      mcpServers: { eca: { command: process.execPath, args: [MCP_NOTES] }, notes: { command: process.execPath, args: [MCP_NOTES] } },
    });
    const shown = await p.waitFor((m) => m.method === '$/showMessage' && /mcpServers\.eca/.test(m.params.message));
    expect(shown.params.message).toMatch(/"eca" is reserved.*not started/);
    const failed = await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.name === 'eca' && m.params.status === 'failed', 'eca failed', 15_000);
    expect(failed.params.error).toMatch(/mcpServers\.eca: the server name "eca" is reserved/);
    await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.name === 'notes' && m.params.status === 'running', 'notes running', 15_000);
    await p.request('chat/prompt', { chatId, message: '/doctor' });
    await p.turnDone(chatId, 2);
    const doctor = p.text(chatId, 'system');
    expect(doctor).toMatch(/at mcpServers\.eca: the server name "eca" is reserved/);
    expect(doctor).toMatch(/- eca: failed/);
  });
});
