/**
 * Cache-stable prompts over real stdio (issue 18, point 7): the built server against the fake
 * Anthropic server, whose prompt cache reports reads and writes from the request's cache_control
 * breakpoints (test/fixtures/fake-llm-cache.ts).
 *
 * Follows ECA's src/eca/llm_providers/anthropic.clj `chat!` (system as text blocks, the static one
 * marked; `add-cache-to-last-tool`; `add-cache-to-last-message`) and src/eca/shared.clj
 * `tokens->cost` / `usage-sumary`: the usage content's `lastMessageCost` and `sessionCost` price
 * cache reads and writes at the model's `cacheRead` / `cacheWrite` costs.
 */
import { describe, expect, it } from 'vitest';
import { FakePromptCache } from '../fixtures/fake-llm-cache.js';
import { ECA, EcaProc, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

/** A system prompt of realistic size (~2,500 tokens): project instructions users keep in their config. */
const SYSTEM = Array.from({ length: 60 }, (_, i) => `- Guideline ${i + 1}: keep functions small, name things for what they do, and test behaviour, not code.`).join('\n');
/** USD per million tokens: reads a tenth of input, writes a quarter more, as Anthropic prices them. */
const COST = { input: 1, output: 0, cacheRead: 0.1, cacheWrite: 1.25 };

function boot(cacheRetention?: string): Promise<{ p: EcaProc; root: string }> {
  const root = workspace({ 'a.txt': 'alpha\nbeta\n' });
  const p = track(
    new EcaProc({
      home: tempDir(),
      config: {
        providers: {
          fake: {
            api: 'anthropic',
            url: llm().url,
            key: 'test-key',
            ...(cacheRetention ? { cacheRetention } : {}),
            models: { m1: { limit: { context: 200_000, output: 1000 }, cost: COST } },
          },
        },
        defaultModel: 'fake/m1',
        systemPrompt: SYSTEM,
        chat: { generateTitles: false, maxRetries: 0 },
        toolCall: { approval: { byDefault: 'allow' } },
      },
    }),
  );
  return p.initialize(root).then(() => ({ p, root }));
}

/** Five turns in one chat, the first with a tool call; the chat and its usage contents, in order. */
async function chatFiveTurns(p: EcaProc): Promise<{ chatId: string; usages: Array<Record<string, any>> }> {
  llm().script(
    [{ toolCall: { id: 'c1', name: 'patchbay__read_file', args: { path: 'a.txt' } } }],
    [{ text: 'It says alpha.' }],
    [{ text: 'two' }],
    [{ text: 'three' }],
    [{ text: 'four' }],
    [{ text: 'five' }],
  );
  const chatId = (await p.request(ECA.chatPrompt, { message: 'read a.txt' })).result.chatId;
  await p.turnDone(chatId);
  for (let turn = 2; turn <= 5; turn++) {
    await p.request(ECA.chatPrompt, { chatId, message: `question ${turn}` });
    await p.turnDone(chatId, turn);
  }
  const usages = p
    .contents(chatId)
    .filter((c) => c.content.type === 'usage')
    .map((c) => c.content);
  return { chatId, usages };
}

/** What `/costs` shows for the chat (ECA's commands.clj "costs"). */
async function costs(p: EcaProc, chatId: string): Promise<string> {
  await p.request(ECA.chatPrompt, { chatId, message: '/costs' });
  const shown = await p.waitFor(
    (m) => m.method === ECA.chatContentReceived.method && m.params.chatId === chatId && m.params.content.type === 'text' && String(m.params.content.text).startsWith('Input tokens:'),
    '/costs',
  );
  return shown.params.content.text as string;
}

/** What a step costs with no cache: every input token at the input price. */
const uncached = (u: Record<string, any>): number => (u.messageInputTokens * COST.input) / 1e6;

describe('prompt caching with Anthropic', () => {
  it('later requests read the earlier prefix from the cache, and usage costs price the reads', async () => {
    const { p } = await boot();
    const { chatId, usages } = await chatFiveTurns(p);
    const requests = llm().requests.filter((r) => r.path === '/v1/messages');
    expect(requests).toHaveLength(6);
    expect(usages).toHaveLength(6);

    for (const r of requests) {
      const body = r.body;
      // Tools, then the stable system part, then up to two user turns: never more than four.
      const marked = JSON.stringify(body).split('"cache_control"').length - 1;
      expect(marked).toBeLessThanOrEqual(4);
      expect(body.tools.at(-1).cache_control).toEqual({ type: 'ephemeral' });
      expect(body.system[0].cache_control).toEqual({ type: 'ephemeral' });
      expect(body.system[0].text).toContain('Guideline 60');
      // The cached prefix is the same bytes in every request of the chat.
      expect(body.system[0].text).toBe(requests[0].body.system[0].text);
      expect(JSON.stringify(body.tools)).toBe(JSON.stringify(requests[0].body.tools));
    }

    // The first request writes; each later one re-reads (at a tenth of the price), so it costs
    // well under its uncached price although its input grows.
    expect(Number(usages[0].lastMessageCost)).toBeGreaterThan(uncached(usages[0]));
    for (const u of usages.slice(1)) expect(Number(u.lastMessageCost)).toBeLessThan(uncached(u) * 0.5);

    // What the fake reported, replayed from the recorded requests: from the third request on the
    // rolling breakpoint on the user turns has the whole previous request read back, and each
    // step's cost is exactly its fresh, read and written tokens at their prices.
    const replay = new FakePromptCache();
    let before = { read: 0, write: 0 };
    let reads = 0;
    let writes = 0;
    requests.forEach((r, i) => {
      const total = usages[i].messageInputTokens;
      const { read, write } = replay.anthropic(r.body, total);
      if (i >= 1) expect(read).toBe(before.read + before.write);
      // …which grows with the conversation: the breakpoints on the user turns move along.
      if (i >= 1) expect(read).toBeGreaterThan(before.read);
      if (i >= 2) expect(read / total).toBeGreaterThan(0.9);
      before = { read, write };
      reads += read;
      writes += write;
      const usd = ((total - read - write) * COST.input + read * COST.cacheRead + write * COST.cacheWrite) / 1e6;
      expect(Number(usages[i].lastMessageCost)).toBeCloseTo(usd, 6);
    });
    for (let i = 1; i < usages.length; i++) expect(usages[i].messageInputTokens).toBeGreaterThanOrEqual(usages[i - 1].messageInputTokens);
    const total = usages.reduce((n, u) => n + Number(u.lastMessageCost), 0);
    // `/costs` adds up the chat's cache reads and writes, as ECA's does.
    const shown = await costs(p, chatId);
    expect(shown).toContain(`Input cache write tokens: ${writes}`);
    expect(shown).toContain(`Input cache read tokens: ${reads}`);
    // (Costs of a cent or more are shown to the cent.)
    expect(Number(usages.at(-1)!.sessionCost)).toBeCloseTo(total, 2);
  });

  it('cacheRetention "none": no breakpoints, nothing read, every token at the input price', async () => {
    const { p } = await boot('none');
    const { chatId, usages } = await chatFiveTurns(p);
    for (const r of llm().requests.filter((x) => x.path === '/v1/messages')) expect(JSON.stringify(r.body)).not.toContain('cache_control');
    for (const u of usages) expect(Number(u.lastMessageCost)).toBeCloseTo(uncached(u), 6);
    expect(await costs(p, chatId)).not.toContain('cache');
  });
});
