/**
 * The ECA wire of a whole chat, byte for byte: every chat notification of fixed scenarios (text
 * with reasoning and usage, an allowed tool, approve, reject, stop while asking, stop mid-stream,
 * a model error, a command, replay through chat/open, no model), normalized (ids, times, temp
 * paths) and compared with test/fixtures/eca-wire.golden.txt. Refactors under the ECA façade
 * must leave it unchanged; a deliberate wire change regenerates it: UPDATE_GOLDEN=1.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();
const lines: string[] = [];

async function boot(config?: Record<string, unknown>) {
  const root = workspace({ 'a.txt': 'alpha\nbeta\n' });
  const p = track(new EcaProc({ home: tempDir(), config: config ?? fakeProviderConfig(llm().url, 'anthropic') }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === 'config/updated');
  roots.set(p, root);
  return p;
}
const roots = new Map<EcaProc, string>();
/** Also kept: `config/updated` scoped to a chat, and the answers to the requests in `answers`. */
function record(name: string, p: EcaProc, answers = new Map<number, string>()) {
  const root = roots.get(p)!;
  lines.push(`## ${name}`);
  for (const m of p.messages) {
    const answer = m.method === undefined && typeof m.id === 'number' ? answers.get(m.id) : undefined;
    if (!answer && !(m.method && (/^chat\/|\$\/showMessage/.test(m.method) || (m.method === 'config/updated' && m.params?.chatId)))) continue;
    let s = JSON.stringify(answer ? { answer, result: m.result } : { method: m.method, params: m.params });
    s = s
      .replace(/"totalTimeMs":\d+/g, '"totalTimeMs":N')
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'UUID')
      .split(root)
      .join('ROOT');
    lines.push(s);
  }
}

const GOLDEN = resolve(import.meta.dirname, '../fixtures/eca-wire.golden.txt');

describe('the ECA wire', () => {
  it('is what the golden file says, for every scenario', async () => {
    let p = await boot();
    llm().script([{ reasoning: 'think', signature: 's' }, { text: 'Hel' }, { text: 'lo' }, { usage: { input: 10, output: 3 } }]);
    await p.request('chat/prompt', { chatId: 'c1', message: 'hi', contentId: 'u1' });
    await p.turnDone('c1');
    llm().script([{ toolCall: { id: 't1', name: 'patchbay__read_file', args: { path: 'a.txt' } } }], [{ text: 'read' }]);
    await p.request('chat/prompt', { chatId: 'c1', message: 'read', contentId: 'u2' });
    await p.turnDone('c1', 2);
    llm().script([{ toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: 'n.txt', content: 'x\n' } } }], [{ text: 'ok' }]);
    await p.request('chat/prompt', { chatId: 'c1', message: 'write', contentId: 'u3' });
    await p.waitFor((m) => m.params?.content?.type === 'toolCallRun' && m.params.content.id === 'w1');
    p.notify('chat/toolCallApprove', { chatId: 'c1', toolCallId: 'w1' });
    await p.turnDone('c1', 3);
    llm().script([{ toolCall: { id: 'w2', name: 'patchbay__write_file', args: { path: 'm.txt', content: 'x\n' } } }], [{ text: 'fine' }]);
    await p.request('chat/prompt', { chatId: 'c1', message: 'write2', contentId: 'u4' });
    await p.waitFor((m) => m.params?.content?.type === 'toolCallRun' && m.params.content.id === 'w2');
    p.notify('chat/toolCallReject', { chatId: 'c1', toolCallId: 'w2' });
    await p.turnDone('c1', 4);
    llm().script([{ toolCall: { id: 'w3', name: 'patchbay__write_file', args: { path: 'o.txt', content: 'x\n' } } }]);
    await p.request('chat/prompt', { chatId: 'c1', message: 'write3', contentId: 'u5' });
    await p.waitFor((m) => m.params?.content?.type === 'toolCallRun' && m.params.content.id === 'w3');
    p.notify('chat/promptStop', { chatId: 'c1' });
    await p.turnDone('c1', 5);
    llm().script([{ text: 'partial' }, { stall: 'forever' }]);
    await p.request('chat/prompt', { chatId: 'c1', message: 'stall', contentId: 'u6' });
    await p.waitFor((m) => m.params?.content?.type === 'text' && m.params.content.text === 'partial');
    p.notify('chat/promptStop', { chatId: 'c1' });
    await p.turnDone('c1', 6);
    llm().script({ status: 400, body: { error: { message: 'bad', type: 'invalid_request_error' } } });
    await p.request('chat/prompt', { chatId: 'c1', message: 'err', contentId: 'u7' });
    await p.turnDone('c1', 7);
    await p.request('chat/prompt', { chatId: 'c1', message: '/costs', contentId: 'u8' });
    await p.turnDone('c1', 8);
    // The replay (ending with the title's metadata) comes before the answer, as ECA sends it.
    const opened = await p.request('chat/open', { chatId: 'c1' });
    record('main', p, new Map([[opened.id as number, 'chat/open']]));
    p = await boot({ chat: { generateTitles: false } });
    await p.request('chat/prompt', { chatId: 'c2', message: 'hi' });
    await p.turnDone('c2');
    record('no model', p);
    const actual = lines.join('\n') + '\n';
    if (process.env.UPDATE_GOLDEN) writeFileSync(GOLDEN, actual);
    expect(actual).toBe(readFileSync(GOLDEN, 'utf8'));
  }, 60_000);
});
