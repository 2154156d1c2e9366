/**
 * A prompt that arrives while configured MCP servers are in their first start waits for them
 * (bounded by mcpStartWaitSeconds) and says so in the chat, for every editor: the built server
 * over real stdio, a real slow MCP server process, the fake LLM.
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();
const NOTES = resolve(import.meta.dirname, '../fixtures/mcp-notes.mjs');

async function boot(delayMs: number, extra: Record<string, unknown> = {}) {
  const mcpServers = { notes: { command: process.execPath, args: [NOTES, '--delay-ms', String(delayMs)] } };
  const p = track(new EcaProc({ home: tempDir(), config: fakeProviderConfig(llm().url, 'openai-chat', { mcpServers, ...extra }) }));
  await p.initialize(workspace());
  return p;
}

const llmCalls = () =>
  llm()
    .requests.filter((r) => r.path === '/v1/chat/completions')
    .map((r) => r.body);
const toolNames = (body: any): string[] => (body.tools ?? []).map((t: any) => t.function.name);
const progressTexts = (p: EcaProc, chatId: string) => p.contents(chatId).flatMap((c) => (c.content.type === 'progress' && c.content.state === 'running' ? [c.content.text as string] : []));

describe('prompts wait for MCP servers in their first start', () => {
  it('a prompt sent right after initialized gets the tools of a server that needs 2 s, and the chat shows the wait', async () => {
    const p = await boot(2000);
    llm().script([{ text: 'done' }]);
    const chatId = (await p.request('chat/prompt', { message: 'hi' })).result.chatId;
    await p.turnDone(chatId, 1, 20_000);
    expect(progressTexts(p, chatId)).toContain('Waiting for MCP servers: notes…');
    expect(toolNames(llmCalls()[0])).toContain('notes__note_count');
    expect(p.text(chatId)).toBe('done');
  });

  it('the wait is bounded: after mcpStartWaitSeconds the turn goes on and names the server still starting', async () => {
    const p = await boot(8000, { mcpStartWaitSeconds: 1 });
    llm().script([{ text: 'without it' }]);
    const chatId = (await p.request('chat/prompt', { message: 'hi' })).result.chatId;
    await p.turnDone(chatId, 1, 20_000);
    expect(p.text(chatId, 'system')).toContain('MCP server notes is still starting after 1 s; its tools join a later prompt.');
    expect(toolNames(llmCalls()[0])).not.toContain('notes__note_count');
    expect(p.text(chatId)).toBe('without it');
  });

  it('chat/promptStop during the wait stops the turn before the model is asked', async () => {
    const p = await boot(8000);
    const chatId = (await p.request('chat/prompt', { message: 'hi' })).result.chatId;
    await p.waitFor((m) => m.params?.chatId === chatId && m.params?.content?.type === 'progress' && /Waiting for MCP servers/.test(m.params.content.text), 'the wait');
    p.notify('chat/promptStop', { chatId });
    await p.turnDone(chatId, 1, 5_000);
    expect(p.text(chatId, 'system')).toContain('Prompt stopped');
    expect(llmCalls()).toHaveLength(0);
  });
});
