/**
 * Cache-stable prompts (issue 18, point 7): prompt-cache reads over a 40-turn chat, the real
 * `patchbay server` over stdio against the fake Anthropic server, whose prompt cache reports reads
 * and writes from the request's cache_control breakpoints the way Anthropic does
 * (test/fixtures/fake-llm-cache.ts). A realistic system prompt (~3,000 tokens of project
 * guidelines in the config's `systemPrompt`) and patchbay's native tools; each turn, the model
 * reads a file (one tool call) and answers. Figure: the share of input tokens read from the cache,
 * over the whole chat and after turn 2 (target ≥ 90%), and the same chat with
 * `cacheRetention: "none"` for the difference.
 *
 * System prompt assembly with 50 rules and 50 skills is bench/prompt-rules.ts (`rules`).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeLlm } from '../test/fixtures/fake-llm.js';
import { Server, tempDir } from './util.js';

export const CACHE_TURNS = Number(process.env.BENCH_CACHE_TURNS ?? 40);
export const CACHE_SHARE_TARGET = 0.9;

export interface CacheShareRun {
  turns: number;
  requests: number;
  inputTokens: number;
  readTokens: number;
  writeTokens: number;
  /** Read tokens / input tokens, every request. */
  overall: number;
  /** The same from turn 3 on. */
  afterTurn2: number;
}

/** ~3,000 tokens of the project guidance users put in their config or AGENTS.md. */
const SYSTEM_PROMPT = Array.from(
  { length: 120 },
  (_, i) => `- Guideline ${i + 1}: keep modules small and single-purpose; name things for what they do; test behaviour through public interfaces; explain why in comments, never what.`,
).join('\n');

/** A source file of the workspace the model reads, ~2 KB. */
function sourceFile(i: number): string {
  return Array.from({ length: 40 }, (_, l) => `export function step${i}_${l}(input: number): number { return input * ${l + 1} + ${i}; }`).join('\n') + '\n';
}

export async function runCacheChat(log: (s: string) => void, cacheRetention?: 'none'): Promise<CacheShareRun> {
  const root = tempDir('pb-bench-cache-ws-');
  mkdirSync(join(root, 'src'));
  for (let i = 1; i <= CACHE_TURNS; i++) writeFileSync(join(root, 'src', `mod${i}.ts`), sourceFile(i));
  const fake = await FakeLlm.start();
  const s = new Server({
    home: tempDir('pb-bench-cache-'),
    env: { PATCHBAY_LOCAL_MODEL: 'off' },
    config: {
      providers: {
        fake: {
          api: 'anthropic',
          url: fake.url,
          key: 'x',
          ...(cacheRetention ? { cacheRetention } : {}),
          models: { m1: { limit: { context: 1_000_000, output: 8192 } } },
        },
      },
      defaultModel: 'fake/m1',
      systemPrompt: SYSTEM_PROMPT,
      chat: { generateTitles: false },
      toolCall: { approval: { byDefault: 'allow' } },
      gateway: { port: 0 },
    },
  });
  try {
    await s.handshake(root);
    let chatId: string | undefined;
    for (let turn = 1; turn <= CACHE_TURNS; turn++) {
      fake.script(
        [{ text: `Let me look at mod${turn}.ts.` }, { toolCall: { name: 'patchbay__read_file', args: { path: `src/mod${turn}.ts` } } }],
        [{ text: `mod${turn}.ts defines 40 small functions that scale their input; step${turn}_0 is the simplest. ${'It follows the guidelines. '.repeat(8)}` }],
      );
      const done = s.waitFor(
        (m) => m.method === 'chat/contentReceived' && (chatId === undefined || m.params?.chatId === chatId) && m.params?.content?.type === 'progress' && m.params.content.state === 'finished',
        `turn ${turn} to end`,
      );
      const res = await s.request('chat/prompt', { ...(chatId ? { chatId } : {}), message: `What does src/mod${turn}.ts do?` });
      chatId ??= (res.msg.result as { chatId: string }).chatId;
      await done;
    }
    const reports = fake.promptCache.reports;
    if (reports.length !== CACHE_TURNS * 2) throw new Error(`expected ${CACHE_TURNS * 2} model requests, the fake saw ${reports.length}`);
    const sum = (xs: typeof reports, f: (r: (typeof reports)[number]) => number): number => xs.reduce((n, r) => n + f(r), 0);
    // Two requests a turn: the tool call, then the answer.
    const later = reports.slice(4);
    const run: CacheShareRun = {
      turns: CACHE_TURNS,
      requests: reports.length,
      inputTokens: sum(reports, (r) => r.total),
      readTokens: sum(reports, (r) => r.read),
      writeTokens: sum(reports, (r) => r.write),
      overall: sum(reports, (r) => r.read) / sum(reports, (r) => r.total),
      afterTurn2: sum(later, (r) => r.read) / sum(later, (r) => r.total),
    };
    log(`  ${cacheRetention ? 'cacheRetention none' : 'caching on'}: ${run.requests} requests, ${run.inputTokens} input tokens, ${run.readTokens} read from the cache, ${run.writeTokens} written`);
    return run;
  } finally {
    await s.stop();
    await fake.close();
  }
}
