/**
 * OpenCtx benchmark: `chat/queryContext` through the real server with PROVIDERS JS-module
 * providers configured, the last of them hanging (its `mentions` never settles), under a short
 * `openctx.timeoutMs` deadline. Every answer should arrive by the deadline (plus a little)
 * and carry the mentions of every fast provider, none of the hanging one's. The same requests
 * with the hanging provider left out are the baseline: the server answers as soon as all
 * providers have, far below the deadline.
 *
 * The providers are written to bench/.work/openctx/ at run time; the workspace is empty, so
 * the answer is the OpenCtx mentions (and nothing the file index would add).
 */
import { join } from 'node:path';
import { FakeLlm } from '../test/fixtures/fake-llm.js';
import { fakeConfig, now, Server, summarize, tempDir, workFile, type Summary } from './util.js';

const PROVIDERS = 20;
const HANG_INDEX = PROVIDERS - 1;
const MENTIONS_EACH = 3;
const DEADLINE_MS = Number(process.env.BENCH_OPENCTX_DEADLINE_MS ?? 300);
const REQUESTS = Number(process.env.BENCH_OPENCTX_REQUESTS ?? 50);
const WARMUP = Number(process.env.BENCH_OPENCTX_WARMUP ?? 5);

/** A small fast provider: MENTIONS_EACH mentions whose titles contain the query. */
const fastProvider = (i: number): string => `// bench/openctx.ts: fast OpenCtx provider p${i}
export default {
  meta: () => ({ name: 'p${i}', mentions: {} }),
  mentions: ({ query }) => Array.from({ length: ${MENTIONS_EACH} }, (_, k) => ({ title: \`\${query} from p${i} #\${k}\`, uri: \`p${i}://\${encodeURIComponent(query)}/\${k}\` })),
};
`;

/** Answers meta, then never settles `mentions`. */
const hangingProvider = (i: number): string => `// bench/openctx.ts: hanging OpenCtx provider p${i}
export default {
  meta: () => ({ name: 'p${i}', mentions: {} }),
  mentions: () => new Promise(() => {}),
};
`;

/** Writes the providers; returns their absolute paths, index order. */
function writeProviders(): string[] {
  return Array.from({ length: PROVIDERS }, (_, i) => workFile(join('openctx', `p${i}.mjs`), i === HANG_INDEX ? hangingProvider(i) : fastProvider(i)));
}

/** Varying queries: a word and a counter, so no two requests ask the same. */
function queries(n: number, tag: string): string[] {
  const words = ['issue', 'note', 'doc', 'ticket', 'owner', 'build', 'deploy', 'review'];
  return Array.from({ length: n }, (_, i) => `${tag}${words[i % words.length]}${i}`);
}

export interface OpenCtxRun {
  providers: number;
  times: Summary;
  /** Answers that carried exactly MENTIONS_EACH matching mentions from every fast provider. */
  complete: number;
  /** Fewest fast providers seen in any one answer. */
  minFast: number;
  /** Mentions from the hanging provider, over all answers. */
  fromHanging: number;
  /** Fast-provider mentions per answer (the same in every complete answer). */
  perAnswer: number;
}

export interface OpenCtxResult {
  deadlineMs: number;
  requests: number;
  fast: number;
  mentionsEach: number;
  withHang: OpenCtxRun;
  baseline: OpenCtxRun;
}

/** Checks one answer: which providers' mentions it carries, and that they match the query. */
function tally(contexts: Array<{ type?: string; server?: string; name?: string }>, query: string): { fast: number; hanging: number; mentions: number; ok: boolean } {
  const per = new Map<string, number>();
  let matching = true;
  for (const c of contexts) {
    if (c.type !== 'mcpResource' || !c.server?.startsWith('openctx:')) continue;
    per.set(c.server, (per.get(c.server) ?? 0) + 1);
    if (!c.name?.includes(query)) matching = false;
  }
  let fast = 0;
  let mentions = 0;
  let exact = true;
  for (let i = 0; i < PROVIDERS; i++) {
    if (i === HANG_INDEX) continue;
    const n = per.get(`openctx:p${i}`) ?? 0;
    if (n) fast++;
    if (n !== MENTIONS_EACH) exact = false;
    mentions += n;
  }
  return { fast, hanging: per.get(`openctx:p${HANG_INDEX}`) ?? 0, mentions, ok: exact && matching };
}

async function measure(fakeUrl: string, files: string[], tag: string): Promise<OpenCtxRun> {
  const providers = Object.fromEntries(files.map((f) => [f, true]));
  const s = new Server({ home: tempDir(), config: { ...fakeConfig(fakeUrl), openctx: { providers, timeoutMs: DEADLINE_MS } } });
  try {
    await s.handshake(tempDir('pb-bench-ws-'));
    // Warm-up: loads every module and caches its meta.
    for (const q of queries(WARMUP, `w${tag}`)) await s.request('chat/queryContext', { query: q, contexts: [] });
    const times: number[] = [];
    const run: Omit<OpenCtxRun, 'times'> = { providers: files.length, complete: 0, minFast: Number.POSITIVE_INFINITY, fromHanging: 0, perAnswer: 0 };
    for (const q of queries(REQUESTS, tag)) {
      const t0 = now();
      const { msg, t } = await s.request('chat/queryContext', { query: q, contexts: [] });
      times.push(t - t0);
      const c = tally(msg.result?.contexts ?? [], q);
      if (c.ok) run.complete++;
      run.minFast = Math.min(run.minFast, c.fast);
      run.fromHanging += c.hanging;
      run.perAnswer = Math.max(run.perAnswer, c.mentions);
    }
    return { ...run, times: summarize(times) };
  } finally {
    await s.stop();
  }
}

export async function runOpenCtx(log: (s: string) => void = console.log): Promise<OpenCtxResult> {
  const files = writeProviders();
  const fastOnly = files.filter((_, i) => i !== HANG_INDEX);
  const fake = await FakeLlm.start();
  try {
    log(
      `openctx: ${REQUESTS} chat/queryContext requests (after ${WARMUP} warm-up) with ${PROVIDERS} JS-module providers (p${HANG_INDEX} hangs), openctx.timeoutMs ${DEADLINE_MS}; then ${fastOnly.length} fast only…`,
    );
    const withHang = await measure(fake.url, files, 'h');
    const baseline = await measure(fake.url, fastOnly, 'b');
    return { deadlineMs: DEADLINE_MS, requests: REQUESTS, fast: fastOnly.length, mentionsEach: MENTIONS_EACH, withHang, baseline };
  } finally {
    await fake.close();
  }
}

/** p95 may exceed the deadline by this much. */
export const OPENCTX_SLACK_MS = 20;
