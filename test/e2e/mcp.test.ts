/**
 * MCP through the built server, with the real @modelcontextprotocol/server-everything
 * configured in `mcpServers` as a user would.
 */
import { describe, expect, it } from 'vitest';
import { resolve } from 'node:path';
import { execFileSync } from 'node:child_process';
import { BIN, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace, type Msg } from './harness.js';

const EVERYTHING = resolve(import.meta.dirname, '../../node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const { llm, track } = useFakeLlmSuite();

function config(extra: Record<string, unknown> = {}) {
  return fakeProviderConfig(llm().url, 'openai-chat', {
    mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
    toolCall: { approval: { allow: { everything: {} } } },
    ...extra,
  });
}

async function boot(extra: Record<string, unknown> = {}) {
  const p = track(new EcaProc({ home: tempDir(), config: config(extra) }));
  await p.initialize(workspace({ 'a.txt': 'a' }));
  const running = await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.type === 'mcp' && m.params.status === 'running', 'everything running', 30_000);
  return { p, running };
}

const toolNames = (m: Msg) => m.params.tools.map((t: { name: string }) => t.name);
const called = (p: EcaProc, chatId: string) =>
  p
    .contents(chatId)
    .filter((c) => c.content.type === 'toolCalled')
    .map((c) => c.content);

describe('MCP: server-everything inside chats', () => {
  it('reports starting then running with its tools, and the LLM sees them as everything__<tool>', async () => {
    const { p, running } = await boot();
    const statuses = p.messages.filter((m) => m.method === 'tool/serverUpdated' && m.params.type === 'mcp').map((m) => m.params.status);
    expect(statuses[0]).toBe('starting');
    expect(running.params).toMatchObject({ name: 'everything', command: process.execPath, args: [EVERYTHING, 'stdio'] });
    expect(toolNames(running)).toEqual(expect.arrayContaining(['echo', 'get-sum', 'get-tiny-image', 'trigger-long-running-operation']));
    llm().script([{ text: 'hi' }]);
    const chatId = (await p.request('chat/prompt', { message: 'hello' })).result.chatId;
    await p.turnDone(chatId);
    const offered = llm().requests[0].body.tools.map((t: any) => t.function.name);
    expect(offered).toEqual(expect.arrayContaining(['everything__echo', 'everything__get-sum', 'patchbay__read_file']));
    expect(llm().requests[0].body.messages[0].content).toMatch(/Instructions from MCP server everything/);
  });

  it('calls echo and get-sum through the approval path with origin mcp', async () => {
    const { p } = await boot({ toolCall: { approval: { allow: { 'everything__get-sum': {} } } } });
    llm().script(
      [{ toolCall: { id: 'e1', name: 'everything__echo', args: { message: 'ping' } } }],
      [{ toolCall: { id: 's1', name: 'everything__get-sum', args: { a: 2, b: 3 } } }],
      [{ text: 'done' }],
    );
    const chatId = (await p.request('chat/prompt', { message: 'go' })).result.chatId;
    const run = await p.waitFor((m) => m.params?.content?.type === 'toolCallRun' && m.params.content.id === 'e1');
    expect(run.params.content).toMatchObject({ origin: 'mcp', server: 'everything', name: 'echo', manualApproval: true });
    p.notify('chat/toolCallApprove', { chatId, toolCallId: 'e1' });
    await p.turnDone(chatId);
    const [echo, sum] = called(p, chatId);
    expect(echo).toMatchObject({ origin: 'mcp', error: false });
    expect(echo.outputs[0].text).toContain('ping');
    expect(sum.outputs[0].text).toContain('5');
    const toolMsgs = llm()
      .requests.at(-1)!
      .body.messages.filter((m: any) => m.role === 'tool');
    expect(toolMsgs[1].content).toContain('5');
  });

  // ECA chat/tool_calls.clj `:send-toolCalled`: text outputs in toolCalled, each image as a ChatImageContent after it.
  it('get-tiny-image returns an image: toolCalled keeps the text, the image follows as image content', async () => {
    const { p } = await boot();
    llm().script([{ toolCall: { id: 'i1', name: 'everything__get-tiny-image', args: {} } }], [{ text: 'nice' }]);
    const chatId = (await p.request('chat/prompt', { message: 'img' })).result.chatId;
    await p.turnDone(chatId);
    expect(called(p, chatId)[0].outputs.every((o: any) => o.type === 'text')).toBe(true);
    const image = p.contents(chatId).find((c) => c.content.type === 'image');
    expect(image?.role).toBe('assistant');
    expect(image?.content).toMatchObject({ type: 'image', mediaType: 'image/png' });
    expect(image?.content.base64.length).toBeGreaterThan(20);
  });

  it('trigger-long-running-operation shows progress and promptStop cancels it', async () => {
    const { p } = await boot();
    llm().script([{ toolCall: { id: 'l1', name: 'everything__trigger-long-running-operation', args: { duration: 30, steps: 30 } } }], [{ text: 'unused' }]);
    const chatId = (await p.request('chat/prompt', { message: 'long' })).result.chatId;
    await p.waitFor((m) => m.params?.content?.type === 'progress' && /trigger-long-running-operation.*\d+\/30/.test(m.params.content.text), 'progress', 15_000);
    const t0 = Date.now();
    p.notify('chat/promptStop', { chatId });
    await p.turnDone(chatId);
    expect(Date.now() - t0).toBeLessThan(5000);
    const [c] = called(p, chatId);
    expect(c.error).toBe(true);
  });

  it('lists resources in queryContext and reads one into the prompt; an update reaches the next turn', async () => {
    const { p } = await boot();
    const q = await p.request('chat/queryContext', { query: 'architecture', contexts: [] });
    const res = q.result.contexts.find((c: any) => c.type === 'mcpResource' && c.uri.includes('architecture'));
    expect(res).toMatchObject({ type: 'mcpResource', server: 'everything', mimeType: expect.any(String) });
    llm().script([{ toolCall: { id: 't1', name: 'everything__toggle-subscriber-updates', args: {} } }], [{ text: 'subscribed' }], [{ text: 'seen again' }]);
    const chatId = (await p.request('chat/prompt', { message: 'read it', contexts: [res] })).result.chatId;
    await p.turnDone(chatId);
    const firstUser = llm().requests[0].body.messages.find((m: any) => m.role === 'user').content;
    expect(firstUser).toMatch(/Architecture/i);
    await p.request('chat/prompt', { chatId, message: 'again' });
    await p.turnDone(chatId, 2);
    const lastUser = llm()
      .requests.at(-1)!
      .body.messages.filter((m: any) => m.role === 'user')
      .at(-1).content;
    expect(lastUser).toContain('again');
    expect(lastUser).toMatch(/Architecture/i);
  });

  it('runs simple-prompt and args-prompt as commands', async () => {
    const { p } = await boot();
    const cmds = (await p.request('chat/queryCommands', { query: 'everything' })).result.commands;
    const args = cmds.find((c: any) => c.name === 'everything:args-prompt');
    expect(args).toMatchObject({
      // eca-webview src/pages/chat/ChatCommands.tsx: `case 'mcpPrompt':`
      type: 'mcpPrompt',
      arguments: [
        { name: 'city', required: true },
        { name: 'state', required: false },
      ],
    });
    llm().script([{ text: 'simple done' }], [{ text: 'sunny' }]);
    const chatId = (await p.request('chat/prompt', { message: '/everything:simple-prompt' })).result.chatId;
    await p.turnDone(chatId);
    expect(JSON.stringify(llm().requests[0].body.messages)).toContain('This is a simple prompt without arguments.');
    await p.request('chat/prompt', { chatId, message: '/everything:args-prompt Paris France' });
    await p.turnDone(chatId, 2);
    expect(JSON.stringify(llm().requests[1].body.messages)).toContain("What's weather in Paris, France?");
  });

  it('mcp/stopServer and mcp/startServer change its status; a stopped server offers no tools', async () => {
    const { p } = await boot();
    p.notify('mcp/stopServer', { name: 'everything' });
    await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.type === 'mcp' && m.params.status === 'stopped');
    llm().script([{ text: 'no tools' }]);
    const chatId = (await p.request('chat/prompt', { message: 'x' })).result.chatId;
    await p.turnDone(chatId);
    expect(llm().requests[0].body.tools.map((t: any) => t.function.name)).not.toContain('everything__echo');
    const from = p.messages.length;
    p.notify('mcp/startServer', { name: 'everything' });
    await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.type === 'mcp' && m.params.status === 'running', 'restart', 30_000, from);
  });

  it('a server that cannot start is marked failed and the rest of patchbay works', async () => {
    const p = track(
      new EcaProc({
        home: tempDir(),
        config: config({ mcpServers: { broken: { command: 'definitely-not-a-command-xyz' }, off: { command: 'x', disabled: true } } }),
      }),
    );
    await p.initialize(workspace());
    await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.name === 'off' && m.params.status === 'disabled');
    await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.name === 'broken' && m.params.status === 'failed', 'failed', 20_000);
    llm().script([{ text: 'fine' }]);
    const chatId = (await p.request('chat/prompt', { message: 'x' })).result.chatId;
    await p.turnDone(chatId);
    expect(p.text(chatId)).toBe('fine');
  });

  it('patchbay doctor lists each MCP server with its status, tool count and last error', async () => {
    const home = tempDir();
    const cfg = config({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] }, broken: { command: 'definitely-not-a-command-xyz' } } });
    const out = execFileSync(process.execPath, [BIN, 'doctor'], {
      cwd: workspace(),
      env: { PATH: process.env.PATH ?? '', HOME: home, PATCHBAY_HOME: home, PATCHBAY_CONFIG: JSON.stringify(cfg), PATCHBAY_LOCAL_MODEL: 'off' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(out).toMatch(/- everything: running, \d+ tools/);
    expect(out).toMatch(/- broken: failed, 0 tools.*last error: .*definitely-not-a-command-xyz/);
  });

  it.each([
    ['crash', 'mcp-crash.mjs', 'crash__crash'],
    ['hang', 'mcp-hang.mjs', 'hang__hang'],
    ['garbage', 'mcp-garbage.mjs', 'garbage__after-garbage'],
  ])('a %s server: the chat gets an error result in time, the server is failed then restarted, patchbay goes on', async (name, file, tool) => {
    const fixture = resolve(import.meta.dirname, '../fixtures', file);
    const p = track(
      new EcaProc({
        home: tempDir(),
        config: config({ mcpServers: { [name]: { command: process.execPath, args: [fixture] } }, mcpTimeoutSeconds: 2, toolCall: { approval: { byDefault: 'allow' } } }),
      }),
    );
    await p.initialize(workspace());
    await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.name === name && m.params.status === 'running', 'running', 30_000);
    llm().script([{ toolCall: { id: 'x1', name: tool, args: {} } }], [{ text: 'recovered' }]);
    const from = p.messages.length;
    const t0 = Date.now();
    const chatId = (await p.request('chat/prompt', { message: 'call it' })).result.chatId;
    const done = await p.waitFor((m) => m.params?.content?.type === 'toolCalled' && m.params.content.id === 'x1', 'toolCalled', 10_000);
    expect(Date.now() - t0).toBeLessThan(2000 + 1500);
    expect(done.params.content.error).toBe(true);
    await p.turnDone(chatId);
    expect(p.text(chatId)).toBe('recovered');
    await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.name === name && m.params.status === 'failed', 'failed', 10_000, from);
    await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.name === name && m.params.status === 'running', 'restarted', 30_000, from);
  });
});
