/**
 * (review) A tool a request leaves out is not run when the model calls it anyway: a model with a
 * small context window is not offered bg_job (Tool.smallContext), and `disabledTools` hides a
 * tool; a call to either is refused as unknown, and the model reads why. In process, fake LLM.
 */
import { describe, expect, it } from 'vitest';
import { InProcEca, useInProcEca } from '../support/eca-inproc.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { fakeProviderConfig, useTempDirs, workspace } from '../e2e/harness.js';

const llm = useFakeLlm();
const temp = useTempDirs();
const track = useInProcEca();

function start(config: Record<string, unknown>): InProcEca {
  const s = new InProcEca({ home: temp(workspace()), config });
  track(s);
  return s;
}

/** The tool names the n-th chat request offered, and the text of its last message (the tool result). */
function request(n: number): { tools: string[]; last: string } {
  const chats = llm().requests.filter((r) => r.path.endsWith('/chat/completions'));
  const body = chats[n].body as { tools?: Array<{ function: { name: string } }>; messages: Array<{ content: unknown }> };
  return { tools: (body.tools ?? []).map((t) => t.function.name), last: JSON.stringify(body.messages.at(-1)?.content) };
}

async function callAnyway(s: InProcEca, name: string, args: Record<string, unknown>): Promise<{ type: string; content: Record<string, unknown> }> {
  llm().script([{ toolCall: { id: 'c1', name, args } }], [{ text: 'OK.' }]);
  await s.initialize(temp(workspace()));
  const { chatId } = await s.request('chat/prompt', { message: 'go' });
  await s.turnDone(chatId);
  const outcome = s.contents(chatId).find((c) => ['toolCallRejected', 'toolCallRun', 'toolCalled'].includes(c.content.type));
  expect(outcome).toBeDefined();
  return { type: outcome!.content.type, content: outcome!.content };
}

describe('calls to tools the request did not offer', () => {
  it('a small-context model calling bg_job (not offered to it): refused as unknown, not run', async () => {
    const config = fakeProviderConfig(llm().url);
    (config.providers as any).fake.models.m1.limit = { context: 8000, output: 100 };
    const s = start(config);
    const outcome = await callAnyway(s, 'patchbay__bg_job', { action: 'list' });
    expect(request(0).tools).not.toContain('patchbay__bg_job');
    expect(request(0).tools).toContain('patchbay__read_file');
    expect(outcome.type).toBe('toolCallRejected');
    expect(request(1).last).toContain('Unknown tool \\"patchbay__bg_job\\"');
  });

  it('a tool in disabledTools: refused as unknown, not run', async () => {
    const s = start({ ...fakeProviderConfig(llm().url), disabledTools: ['directory_tree'] });
    const outcome = await callAnyway(s, 'patchbay__directory_tree', { path: '.' });
    expect(request(0).tools).not.toContain('patchbay__directory_tree');
    expect(outcome.type).toBe('toolCallRejected');
    expect(request(1).last).toContain('Unknown tool \\"patchbay__directory_tree\\"');
  });
});
