/**
 * Context-overflow pruning meets the prompt cache, over the built binary's real stdio against the
 * fake Anthropic server (its prompt cache reports reads from the cache_control breakpoints,
 * test/fixtures/fake-llm-cache.ts; it refuses requests over `contextLimit` with Anthropic's
 * "prompt is too long").
 *
 * ECA's chat.clj `:context-overflow` branch prunes old tool results once and goes on; its
 * anthropic.clj `chat!` caches the conversation up to the last message. Once a chat's old tool
 * results are pruned, the requests after must still read the conversation back from the cache:
 * the pruned results stay the ones pruned, instead of a window that slides along and changes an
 * earlier message in every request.
 */
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';
import type { RecordedRequest } from '../fixtures/fake-llm.js';

const { llm, track } = useFakeLlmSuite();

const tokens = (r: RecordedRequest): number => Math.ceil(JSON.stringify(r.body).length / 4);
/** Lines of 80 characters, `n` tokens in all. */
const bulk = (mark: string, n: number) => `${mark}${'.'.repeat(79 - mark.length)}\n`.repeat(Math.ceil((n * 4) / 80));

describe('pruned tool results and the prompt cache', () => {
  it('after the overflow prunes old results, each later request reads the whole previous one back from the cache', async () => {
    const files: Record<string, string> = { 'one.txt': bulk('one', 4000), 'two.txt': bulk('two', 3000) };
    for (let i = 1; i <= 4; i++) files[`s${i}.txt`] = `small file ${i}\n`;
    const root = workspace(files);
    const cfg = fakeProviderConfig(llm().url, 'anthropic', { toolCall: { approval: { byDefault: 'allow' } } });
    (cfg.providers as Record<string, { models: Record<string, unknown> }>).fake.models = { m1: {} };
    const p = track(new EcaProc({ home: tempDir(), config: cfg }));
    await p.initialize(root);
    await p.waitFor((m) => m.method === ECA.configUpdated.method);

    const read = (id: string, path: string) => [{ toolCall: { id, name: 'patchbay__read_file', args: { path } } }];
    llm().script(read('c1', 'one.txt'), [{ text: 'ok1' }], read('c2', 'two.txt'), read('c3', 's1.txt'), read('c4', 's2.txt'), read('c5', 's3.txt'), read('c6', 's4.txt'), [{ text: 'done' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'read one.txt' })).result.chatId;
    await p.turnDone(chatId);
    const requests = () => llm().requests.filter((r) => r.path === '/v1/messages');
    // Room for the chat and two.txt only once one.txt's 4k are pruned.
    llm().contextLimit = tokens(requests()[0]) + 5000;
    await p.request(ECA.chatPrompt, { chatId, message: 'read two.txt, then s1 to s4' });
    await p.turnDone(chatId, 2);

    expect(llm().overflows).toBe(1);
    expect(p.text(chatId)).toBe('ok1done');
    // The fake's cache saw every request it answered (not the refused one), in order.
    const answered = requests().filter((r) => tokens(r) <= llm().contextLimit!);
    const reports = llm().promptCache.reports;
    expect(reports).toHaveLength(answered.length);
    const firstPruned = answered.findIndex((r) => JSON.stringify(r.body).includes('[output pruned]'));
    expect(firstPruned).toBeGreaterThan(0);
    // From the pruned request on every request is pruned, and the next ones read back all the
    // previous request cached (its reads and writes), as they did before the overflow.
    expect(answered.length - firstPruned).toBeGreaterThanOrEqual(5);
    for (let i = firstPruned + 1; i < answered.length; i++) {
      expect(JSON.stringify(answered[i].body), `request ${i}`).toContain('[output pruned]');
      expect(reports[i].read, `request ${i} reads request ${i - 1}'s prefix`).toBe(reports[i - 1].read + reports[i - 1].write);
    }
  });
});
