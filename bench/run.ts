/**
 * `npm run bench`: every benchmark, each printed as a figure, a ratio measured in the same
 * run, its target and PASS/FAIL, then a compact table. Always exits 0 — these are figures,
 * not tests.
 *
 *   relay         10,000 streamed chunks through patchbay vs. read directly (bench/relay.ts)
 *   acp-relay     the same through `patchbay acp` (ACP session/update chunks) (bench/acp-relay.ts)
 *   startup       spawn → initialize answered vs. `node -e 0` (bench/startup.ts)
 *   acp-startup   `patchbay acp` spawn → initialize answered vs. `patchbay server`'s (bench/acp-startup.ts)
 *   idle RSS      after the handshake and ~2 s idle (bench/rss.ts)
 *   queryContext  in-process FileIndex on a 100k-file workspace (bench/query-context.mjs),
 *                 and `chat/queryContext` through the real server over stdio on the same one
 *   mcp           an MCP tool call through patchbay vs. the SDK client directly, and
 *                 spawn → config/updated with ten slow-starting MCP servers vs. none (bench/mcp.ts)
 *   gateway       a provider tool call through the gateway (SDK provider) vs. a raw ws echo,
 *                 sustained calls/s, and gateway RSS with 1,000 bound providers (bench/gateway.ts)
 *   flood         `chat/queryCommands` latency through the real server while 10 providers push
 *                 as fast as they can vs. idle (bench/flood.ts)
 *   openctx       `chat/queryContext` with 20 OpenCtx JS-module providers, one hanging, under a
 *                 short deadline vs. the 19 fast ones alone (bench/openctx.ts)
 *   lsp           time to fresh diagnostics after an edit: patchbay's LspHost vs. driving
 *                 typescript-language-server directly (bench/lsp.ts)
 *   framing       a request right after an ignored 10 MB / 40 MB notification: ms per MB at
 *                 each size (linear reading keeps them alike) (bench/framing.ts)
 *   inline        `completion/inline` through the server vs. the same provider call made directly
 *                 (fake LLM): added latency p50/p95, FIM and chat paths (bench/inline.ts)
 *   jobs          server VmRSS while two background jobs flood it (short lines, one endless
 *                 line) vs. the same server idle (bench/jobs.ts)
 *   rules         system prompt assembly through a real Workspace's loaders with AGENTS.md files,
 *                 50 rules, 50 skills and a 200-message chat, vs. the same with no files
 *                 (bench/prompt-rules.ts)
 *   local         the tiny GGUF test model through patchbay's built-in local provider vs.
 *                 node-llama-cpp driven directly with the same prompt: cold and warm time to
 *                 the first token, tokens/s (bench/local.ts)
 *   replay        `chat/open` of a stored 200-message chat with 50 tool calls (every stage of each
 *                 call replayed) vs. a 200-message chat of text only, same server (bench/replay.ts)
 *   cache         a 40-turn chat through the real server against the fake Anthropic server: share
 *                 of input tokens read from the prompt cache, overall and after turn 2, vs. the same
 *                 chat with cacheRetention "none" (bench/cache.ts)
 *   sandbox       a sandboxed `true` through runShell and WorkspaceSandbox.plan vs. the same under
 *                 bare bwrap with the same namespaces vs. plain `sh -c true`, interleaved (bench/sandbox.ts)
 *
 *   before-after  `server` and `acp` start-up (initialize; acp session/new) and idle RSS of a
 *                 BASELINE build and this one, interleaved in one run (bench/before-after.ts)
 *   workspaces    the RSS and heap of each extra open workspace in one process, after GC
 *                 (bench/workspaces.ts)
 *
 * `node bench/.out/bench/run.js relay rss` runs only those. BENCH_CHILD_NODE_ARGS passes
 * node flags to every spawned server (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 *
 * A baseline to compare with (bench/baseline.ts): `--baseline <git rev>` (exported and built
 * once into a cache folder) or PATCHBAY_BENCH_BASELINE=<a built checkout>, e.g.
 * `npm run bench -- --baseline 8c00c1c before-after relay acp-relay`. With one, `before-after`
 * measures both builds side by side and the relay benches run against both; without one, they
 * measure this checkout alone.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { runFraming } from './framing.js';
import { CACHE_SHARE_TARGET, runCacheChat } from './cache.js';
import { INLINE_TARGET_MS, runInline } from './inline.js';
import { FLOOD_TARGET, runFlood } from './flood.js';
import { GATEWAY_TARGETS, runGatewayCalls, runGatewayRss } from './gateway.js';
import { runLocal, type LocalRun } from './local.js';
import { LSP_SETTLE_MS, LSP_TARGET, runLsp } from './lsp.js';
import { MCP_SLOW, runMcpCalls, runMcpStart } from './mcp.js';
import { OPENCTX_SLACK_MS, runOpenCtx } from './openctx.js';
import { CURRENT, resolveBaseline, takeBaselineArg, type Build } from './baseline.js';
import { FIGURES, runBeforeAfter, type BuildFigures, type Figure } from './before-after.js';
import { runRelay, type RelayResult } from './relay.js';
import { runWorkspaces, WORKSPACE_TARGET_MB } from './workspaces.js';
import { runAcpRelay } from './acp-relay.js';
import { ACP_STARTUP_TARGET, runAcpStartup } from './acp-startup.js';
import { runRss } from './rss.js';
import { JOBS_TARGET_MB, runJobsFlood } from './jobs.js';
import { runStartup } from './startup.js';
import { PROMPT_TARGET_MS, runPromptRules } from './prompt-rules.js';
import { REPLAY_TARGET_MS, runReplay } from './replay.js';
import { LEG_NAMES, LEGS, runSandbox, SANDBOX_TARGET } from './sandbox.js';
import { cleanupTemps, mb, median, ms, now, pct, procMemKb, rate, ratio, ROOT, Server, sleep, summarize, tempDir } from './util.js';

interface Row {
  bench: string;
  figure: string;
  reference: string;
  ratio: string;
  target: string;
  pass: boolean | undefined;
}

const rows: Row[] = [];
const log = (s: string): void => console.log(s);

function row(r: Row): void {
  rows.push(r);
  const verdict = r.pass === undefined ? '' : r.pass ? '  PASS' : '  FAIL';
  log(`  → ${r.bench}: ${r.figure} (${r.reference}; ratio ${r.ratio}); target ${r.target}${verdict}`);
}

function failed(bench: string, e: unknown): void {
  const msg = e instanceof Error ? e.message : String(e);
  log(`  ✗ ${bench} did not run: ${msg}`);
  rows.push({ bench, figure: 'error', reference: msg.split('\n')[0].slice(0, 60), ratio: '—', target: '—', pass: false });
}

// ---------------------------------------------------------------- framing

async function framing(): Promise<void> {
  try {
    const r = await runFraming(log);
    const [small, big] = [r.runs[0], r.runs[r.runs.length - 1]];
    row({
      bench: `framing ${big.mb} MB`,
      figure: `${big.msPerMb.toFixed(1)} ms/MB`,
      reference: `${small.mb} MB ${small.msPerMb.toFixed(1)} ms/MB`,
      ratio: ratio(r.growth),
      // Linear reading keeps ms/MB alike (JSON.parse and GC of a 40 MB string add some); the quadratic reader was ~9×.
      target: '≤ 2× (linear)',
      pass: r.growth <= 2,
    });
  } catch (e) {
    failed('framing', e);
  }
}

// ---------------------------------------------------------------- relay

/** The rows of a relay run (bench/relay.ts for ECA, bench/acp-relay.ts for ACP), labelled `name`. */
function relayRows(name: string, r: RelayResult): void {
  const d = r.direct.latency;
  const p = r.relay.latency;
  log(`  direct  latency p50 ${ms(d.p50, 3)}  p99 ${ms(d.p99, 3)}  max ${ms(d.max, 3)}   rate ${rate(r.direct.rate)} (runs: ${r.direct.rates.map(rate).join(', ')})`);
  log(`  relay   latency p50 ${ms(p.p50, 3)}  p99 ${ms(p.p99, 3)}  max ${ms(p.max, 3)}   rate ${rate(r.relay.rate)} (runs: ${r.relay.rates.map(rate).join(', ')})`);
  log(`  relay sent ${r.relay.notifications} text notifications for ${r.chunks} chunks; server CPU per burst ${r.relay.cpuMs.map((x) => x.toFixed(0)).join(', ')} ms`);
  row({
    bench: `${name} added latency p50`,
    figure: `+${ms(r.addedP50, 3)}`,
    reference: `relay ${ms(p.p50, 3)} vs direct ${ms(d.p50, 3)}`,
    ratio: ratio(p.p50 / d.p50),
    target: '≤ 0.5 ms',
    pass: r.addedP50 <= 0.5,
  });
  row({
    bench: `${name} added latency p99`,
    figure: `+${ms(r.addedP99, 3)}`,
    reference: `relay ${ms(p.p99, 3)} vs direct ${ms(d.p99, 3)}`,
    ratio: ratio(p.p99 / d.p99),
    target: '(info)',
    pass: undefined,
  });
  row({
    bench: `${name} rate`,
    figure: `${rate(r.relay.rate)} chunks`,
    reference: `direct ${rate(r.direct.rate)}`,
    ratio: pct(r.rateRatio),
    target: '≥ 50% of direct',
    pass: r.rateRatio >= 0.5,
  });
}

/**
 * A relay bench against this checkout and, when there is one, the baseline too: both servers run
 * at once and are measured in the same rounds (bench/relay.ts measureLegs), so the rows comparing
 * them share the machine's load.
 */
async function relayBoth(name: string, run: (log: (s: string) => void, bins?: Array<string | undefined>) => Promise<RelayResult[]>): Promise<void> {
  let before: RelayResult | undefined;
  let after: RelayResult;
  try {
    if (baseline) log(`${name}: the baseline build (${baseline.describe}) and the current one, side by side…`);
    const r = await run(log, baseline ? [baseline.bin, undefined] : [undefined]);
    [before, after] = r.length === 2 ? r : [undefined, r[0]];
  } catch (e) {
    failed(name, e);
    return;
  }
  if (before) relayRows(`${name} (baseline)`, before);
  relayRows(name, after);
  if (!before) return;
  // Round by round (the same load for both): current rate / baseline rate. For information only:
  // an A/A run (PATCHBAY_BENCH_BASELINE set to this checkout, the same build twice) gave 0.76× on
  // 2 loaded shared cores, so the wall-clock rate of two servers side by side is biased or noisy
  // by that much; the CPU row below is the comparison (A/A: 1.00×).
  const perRound = median(after.relay.rates.map((x, i) => x / before.relay.rates[i]));
  row({
    bench: `${name} added p50, current vs baseline`,
    figure: `+${ms(after.addedP50, 3)}`,
    reference: `baseline +${ms(before.addedP50, 3)}`,
    ratio: `${after.addedP50 - before.addedP50 >= 0 ? '+' : ''}${ms(after.addedP50 - before.addedP50, 3)}`,
    target: 'unchanged (± 0.1 ms)',
    pass: after.addedP50 - before.addedP50 <= 0.1,
  });
  row({
    bench: `${name} rate, current vs baseline`,
    figure: `${rate(after.relay.rate)} chunks`,
    reference: `baseline ${rate(before.relay.rate)}`,
    ratio: `${ratio(perRound)} (per round)`,
    target: '(info: wall clock, load-bound)',
    pass: undefined,
  });
  // The server's CPU time moves far less with the machine's load than its rate does; summed over
  // every burst, as one burst is only a few 10 ms clock ticks.
  const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
  const cpu = sum(after.relay.cpuMs) / sum(before.relay.cpuMs);
  row({
    bench: `${name} CPU, ${after.relay.cpuMs.length} × ${after.chunks} chunks, current vs baseline`,
    figure: ms(sum(after.relay.cpuMs), 0),
    reference: `baseline ${ms(sum(before.relay.cpuMs), 0)}`,
    ratio: ratio(cpu),
    target: 'unchanged (≤ 1.10×)',
    pass: cpu <= 1.1,
  });
}

const relay = (): Promise<void> => relayBoth('relay', runRelay);
const acpRelay = (): Promise<void> => relayBoth('acp relay', runAcpRelay);

// ---------------------------------------------------------------- before/after

const FIGURE_NAMES: Record<Figure, string> = {
  serverStart: 'server start → initialize',
  acpInit: 'acp start → initialize',
  acpSession: 'acp start → session/new',
  serverStartCpu: 'server CPU → initialize',
  acpInitCpu: 'acp CPU → initialize',
  acpSessionCpu: 'acp CPU → session/new',
  serverRssKb: 'server idle RSS',
  acpRssKb: 'acp idle RSS (1 session)',
};
/** Within noise: 10 % on a start-up time (wall or CPU), 5 % on idle memory. */
const NOISE: Record<Figure, number> = { serverStart: 1.1, acpInit: 1.1, acpSession: 1.1, serverStartCpu: 1.1, acpInitCpu: 1.1, acpSessionCpu: 1.1, serverRssKb: 1.05, acpRssKb: 1.05 };

async function beforeAfter(): Promise<void> {
  try {
    const builds: Build[] = baseline ? [baseline, CURRENT] : [CURRENT];
    const r = await runBeforeAfter(builds, log);
    const isMem = (k: Figure): boolean => k.endsWith('RssKb');
    const show = (k: Figure, x: number): string => (isMem(k) ? mb(x) : ms(x, 1));
    const spread = (k: Figure, f: BuildFigures): string => {
      const xs = [...f.all[k]].sort((a, b) => a - b);
      return `${show(k, xs[0])} … ${show(k, xs[xs.length - 1])}`;
    };
    for (const k of FIGURES) for (const f of r) log(`  ${FIGURE_NAMES[k].padEnd(26)} ${f.build.name.padEnd(8)} median ${show(k, f.median[k])}  (${f.all[k].length} runs: ${spread(k, f)})`);
    const [before, after] = r.length === 2 ? r : [undefined, r[0]];
    for (const k of FIGURES) {
      const x = after.median[k] / (before?.median[k] ?? Number.NaN);
      row({
        bench: `${FIGURE_NAMES[k]} (median)`,
        figure: show(k, after.median[k]),
        reference: before ? `baseline ${show(k, before.median[k])}` : 'no baseline given',
        ratio: before ? ratio(x) : '—',
        target: before ? `≤ ${NOISE[k].toFixed(2)}× baseline` : '(info)',
        pass: before ? x <= NOISE[k] : undefined,
      });
    }
  } catch (e) {
    failed('before-after', e);
  }
}

// ---------------------------------------------------------------- workspaces

async function workspaces(): Promise<void> {
  for (const build of baseline ? [baseline, CURRENT] : [CURRENT]) {
    const label = build === CURRENT ? '' : ` (${build.name})`;
    try {
      const r = await runWorkspaces(log, build);
      const show = (kb: number): string => `${(kb / 1024).toFixed(2)} MB`;
      log(`  ${r.mode}; medians: ${r.samples.map((s) => `${s.open < 0 ? 'all closed' : `${s.open} open`} RSS ${mb(s.rssKb)} heap ${mb(s.heapKb)}`).join('; ')}`);
      log(`  per extra workspace, each round: ${r.rssRounds.map(show).join(', ')} RSS`);
      const max = Math.max(...r.levels);
      const one = r.samples.find((s) => s.open === 1)!;
      const all = r.samples.find((s) => s.open === max)!;
      row({
        bench: `RSS per extra open workspace${label}`,
        figure: `+${show(r.perWorkspace.rssKb)}`,
        reference: `1 open ${mb(one.rssKb)}, ${max} open ${mb(all.rssKb)}; ${r.mode}`,
        ratio: `${pct(r.perWorkspace.rssKb / 1024 / WORKSPACE_TARGET_MB)} of budget`,
        target: build === CURRENT ? `≤ +${WORKSPACE_TARGET_MB} MB` : '(info)',
        pass: build === CURRENT ? r.perWorkspace.rssKb <= WORKSPACE_TARGET_MB * 1024 : undefined,
      });
      row({
        bench: `heap per extra open workspace${label}`,
        figure: `+${show(r.perWorkspace.heapKb)}`,
        reference: `1 open ${mb(one.heapKb)}, ${max} open ${mb(all.heapKb)}; external +${show(r.perWorkspace.externalKb)} each`,
        ratio: '—',
        target: '(info)',
        pass: undefined,
      });
    } catch (e) {
      failed(`workspaces${label}`, e);
    }
  }
}

// ---------------------------------------------------------------- startup

async function startup(): Promise<void> {
  try {
    const r = await runStartup(log);
    const spread = (xs: number[]) => `min ${ms(Math.min(...xs), 0)}, max ${ms(Math.max(...xs), 0)}`;
    log(`  patchbay ${spread(r.patchbayAll)};  node -e 0 ${spread(r.nodeAll)}`);
    row({
      bench: 'startup (median)',
      figure: ms(r.patchbayMs, 1),
      reference: `node -e 0 ${ms(r.nodeMs, 1)}`,
      ratio: ratio(r.ratio),
      target: '≤ 2.5× node',
      pass: r.ratio <= 2.5,
    });
  } catch (e) {
    failed('startup', e);
  }
}

async function acpStartup(): Promise<void> {
  try {
    const r = await runAcpStartup(log);
    const spread = (xs: number[]) => `min ${ms(Math.min(...xs), 0)}, max ${ms(Math.max(...xs), 0)}`;
    log(`  patchbay acp ${spread(r.acpAll)};  patchbay server ${spread(r.ecaAll)}`);
    row({
      bench: 'acp startup (median)',
      figure: ms(r.acpMs, 1),
      reference: `ECA server ${ms(r.ecaMs, 1)}`,
      ratio: ratio(r.ratio),
      target: `≤ ${ACP_STARTUP_TARGET}× ECA`,
      pass: r.ratio <= ACP_STARTUP_TARGET,
    });
  } catch (e) {
    failed('acp startup', e);
  }
}

// ---------------------------------------------------------------- idle RSS

async function rss(): Promise<void> {
  try {
    const r = await runRss(log);
    log(`  VmRSS ${mb(r.rssKb)}, VmHWM (peak) ${mb(r.hwmKb)}; idle bare node ${mb(r.nodeRssKb)}`);
    row({
      bench: 'idle RSS',
      figure: mb(r.rssKb),
      reference: `bare node ${mb(r.nodeRssKb)}`,
      ratio: ratio(r.ratio),
      target: '≤ 80 MB',
      pass: r.rssKb <= 80 * 1024,
    });
  } catch (e) {
    failed('idle RSS', e);
  }
}

// ---------------------------------------------------------------- queryContext

const QC_TARGET_MS = 30;
const QC_FILES = 100_000;

/** What bench/query-context.mjs exports (plain JS, loaded from the source tree at run time). */
interface QueryContextBench {
  run(o?: { log?: (s: string) => void }): Promise<{ p50: number; p95: number; p99: number; buildMs: number }>;
  /** The queries its runs measure: typed names, initials, path-like, `name.ext`, misses. */
  queries(n?: number): string[];
}

function loadQueryContextBench(): Promise<QueryContextBench> {
  return import(new URL('../../query-context.mjs', import.meta.url).href) as Promise<QueryContextBench>;
}

async function queryContextInProcess(): Promise<number | undefined> {
  try {
    const mod = await loadQueryContextBench();
    log('queryContext: in-process FileIndex on the 100k-file workspace (bench/query-context.mjs)…');
    const r = await mod.run({ log: (s) => log(`  ${s}`) });
    row({
      bench: 'queryContext p95 (in-process)',
      figure: ms(r.p95),
      reference: `p50 ${ms(r.p50)}, p99 ${ms(r.p99)}`,
      ratio: `${pct(r.p95 / QC_TARGET_MS)} of budget`,
      target: `≤ ${QC_TARGET_MS} ms`,
      pass: r.p95 <= QC_TARGET_MS,
    });
    return r.p95;
  } catch (e) {
    failed('queryContext (in-process)', e);
    return undefined;
  }
}

/**
 * The workspace bench/query-context.mjs generated: the newest `bench/.work/ws-100000*`
 * directory that has its `.done` marker (the name carries a version suffix that may change).
 */
function benchWorkspace(): string | undefined {
  const work = join(ROOT, 'bench', '.work');
  if (!existsSync(work)) return undefined;
  const done = readdirSync(work)
    .filter((n) => n.startsWith(`ws-${QC_FILES}`) && !n.endsWith('.done') && existsSync(join(work, `${n}.done`)))
    .map((n) => join(work, n))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  return done[0];
}

/** `chat/queryContext` round trips through a real server whose workspace is the 100k one. */
async function queryContextStdio(inProcessP95: number | undefined): Promise<void> {
  const ws = benchWorkspace();
  if (!ws) {
    failed('queryContext (stdio)', new Error(`no finished ws-${QC_FILES}* workspace under bench/.work/`));
    return;
  }
  log(`queryContext: \`chat/queryContext\` through the server over stdio, same workspace (${ws})…`);
  const s = new Server({ home: tempDir() });
  try {
    await s.handshake(ws);
    // The first answer may have to build the index (or wait for the warm-up build).
    const t0 = now();
    await s.request('chat/queryContext', { query: 'user', contexts: [] });
    const firstMs = now() - t0;
    await sleep(1500); // let the warm-up build started by `initialized` land
    const qs = (await loadQueryContextBench()).queries(500);
    for (const q of qs.slice(0, 10)) await s.request('chat/queryContext', { query: q, contexts: [] });
    const times: number[] = [];
    let hits = 0;
    let bytes = 0;
    for (const q of qs) {
      const t = now();
      const r = await s.request('chat/queryContext', { query: q, contexts: [] });
      times.push(r.t - t);
      const n = (r.msg.result?.contexts ?? []).length;
      if (n) hits++;
      bytes += JSON.stringify(r.msg.result).length;
    }
    const st = summarize(times);
    const mem = procMemKb(s.pid);
    log(
      `  first query ${ms(firstMs, 0)}; ${qs.length} queries (${hits} with results, ~${Math.round(bytes / qs.length)} B/answer): p50 ${ms(st.p50)}  p95 ${ms(st.p95)}  p99 ${ms(st.p99)}  max ${ms(st.max)}`,
    );
    log(`  server VmRSS with the 100k index: ${mb(mem.rss)} (peak ${mb(mem.hwm)})`);
    row({
      bench: 'queryContext p95 (stdio)',
      figure: ms(st.p95),
      reference: `p50 ${ms(st.p50)}, p99 ${ms(st.p99)}`,
      ratio: inProcessP95 ? `${ratio(st.p95 / inProcessP95)} in-process` : `${pct(st.p95 / QC_TARGET_MS)} of budget`,
      target: `≤ ${QC_TARGET_MS} ms`,
      pass: st.p95 <= QC_TARGET_MS,
    });
  } catch (e) {
    failed('queryContext (stdio)', e);
  } finally {
    await s.stop();
  }
}

// ---------------------------------------------------------------- mcp

const MCP_CALL_TARGET = 1.2;
const MCP_START_TARGET = 1.2;

async function mcp(): Promise<void> {
  try {
    const r = await runMcpCalls(log);
    const { direct: d, patchbay: p } = r;
    log(`  direct SDK  p50 ${ms(d.p50, 3)}  p99 ${ms(d.p99, 3)}  max ${ms(d.max, 3)}  (${d.n} calls)`);
    log(`  patchbay    p50 ${ms(p.p50, 3)}  p99 ${ms(p.p99, 3)}  max ${ms(p.max, 3)}  (${p.n} calls, toolCallRunning → toolCalled)`);
    row({
      bench: 'mcp tool call p50',
      figure: ms(p.p50, 3),
      reference: `direct SDK ${ms(d.p50, 3)}`,
      ratio: ratio(p.p50 / d.p50),
      target: `≤ ${MCP_CALL_TARGET}× direct`,
      pass: p.p50 <= MCP_CALL_TARGET * d.p50,
    });
    row({
      bench: 'mcp tool call p99',
      figure: ms(p.p99, 3),
      reference: `direct SDK ${ms(d.p99, 3)}`,
      ratio: ratio(p.p99 / d.p99),
      target: '(info)',
      pass: undefined,
    });
    // toolCalled → next toolCalled: all of a call's cost, storing it and the next call's start included.
    row({
      bench: 'mcp call cycle p50',
      figure: ms(r.patchbayCycle.p50, 3),
      reference: `direct SDK ${ms(r.directCycle.p50, 3)}`,
      ratio: ratio(r.patchbayCycle.p50 / r.directCycle.p50),
      target: '(info)',
      pass: undefined,
    });
  } catch (e) {
    failed('mcp tool call', e);
  }
  try {
    const r = await runMcpStart(log);
    const all = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ');
    log(`  config/updated, none: ${all(r.withoutAll)} ms;  ${MCP_SLOW.servers} slow: ${all(r.withSlowAll)} ms;  last slow server running: ${all(r.lastRunningAll)} ms`);
    row({
      bench: `config/updated, ${MCP_SLOW.servers} slow MCP`,
      figure: ms(r.withSlowMs, 1),
      reference: `no MCP servers ${ms(r.withoutMs, 1)}`,
      ratio: ratio(r.withSlowMs / r.withoutMs),
      target: `≤ ${MCP_START_TARGET}× none`,
      pass: r.withSlowMs <= MCP_START_TARGET * r.withoutMs,
    });
    row({
      bench: `last of ${MCP_SLOW.servers} slow MCP running`,
      figure: ms(r.lastRunningMs, 0),
      reference: `each waits ${MCP_SLOW.ms} ms to speak`,
      ratio: '—',
      target: '(info)',
      pass: undefined,
    });
  } catch (e) {
    failed('mcp slow start', e);
  }
}

// ---------------------------------------------------------------- flood

async function flood(): Promise<void> {
  try {
    const r = await runFlood(log);
    const { idle: i, flood: f } = r;
    log(`  idle   chat/queryCommands p50 ${ms(i.p50, 3)}  p95 ${ms(i.p95, 3)}  max ${ms(i.max, 3)}  (${i.n} requests)`);
    log(`  flood  chat/queryCommands p50 ${ms(f.p50, 3)}  p95 ${ms(f.p95, 3)}  max ${ms(f.max, 3)}  (${f.n} requests, ${r.providers} providers pushing)`);
    for (const [name, a, b] of [
      ['p50', f.p50, i.p50],
      ['p95', f.p95, i.p95],
    ] as const) {
      row({
        bench: `editor request under flood ${name}`,
        figure: ms(a, 3),
        reference: `idle ${ms(b, 3)}`,
        ratio: ratio(a / b),
        target: `≤ ${FLOOD_TARGET}× idle`,
        pass: a <= FLOOD_TARGET * b,
      });
    }
  } catch (e) {
    failed('flood', e);
  }
}

// ---------------------------------------------------------------- jobs

async function jobs(): Promise<void> {
  try {
    const r = await runJobsFlood(log);
    log(`  server VmRSS idle ${mb(r.idleKb)}, peak under the flood ${mb(r.peakKb)}; kept: ${r.held.map((h) => `${h.lines} lines / ${h.chars} chars`).join(', ')}`);
    row({
      bench: 'RSS with 2 flooding background jobs',
      figure: `+${mb(r.growthKb)}`,
      reference: `idle server ${mb(r.idleKb)}`,
      ratio: ratio(r.peakKb / r.idleKb),
      target: `≤ +${JOBS_TARGET_MB} MB`,
      pass: r.growthKb <= JOBS_TARGET_MB * 1024,
    });
  } catch (e) {
    failed('jobs flood', e);
  }
}

// ---------------------------------------------------------------- gateway

async function gateway(): Promise<void> {
  try {
    const r = await runGatewayCalls(log);
    const { echo: e, gateway: g, throughput: t } = r;
    log(`  raw ws echo  p50 ${ms(e.p50, 3)}  p99 ${ms(e.p99, 3)}  max ${ms(e.max, 3)}  (${e.n} round trips, ${r.frameBytes}-byte frames)`);
    log(
      `  JSON echo    p50 ${ms(r.jsonEcho.p50, 3)}  p99 ${ms(r.jsonEcho.p99, 3)}  max ${ms(r.jsonEcho.max, 3)}  (server parses and answers a tool.result; gateway p50 ${ratio(g.p50 / r.jsonEcho.p50)} of it)`,
    );
    log(`  gateway      p50 ${ms(g.p50, 3)}  p99 ${ms(g.p99, 3)}  max ${ms(g.max, 3)}  (${g.n} calls, Tool.call() → resolved)`);
    log(`  sustained    gateway ${t.gateway.calls} calls in ${t.gateway.seconds.toFixed(1)} s, raw ws echo ${t.echo.calls} round trips in ${t.echo.seconds.toFixed(1)} s`);
    row({
      bench: 'gateway tool call p50',
      figure: ms(g.p50, 3),
      reference: `raw ws echo ${ms(e.p50, 3)}`,
      ratio: ratio(g.p50 / e.p50),
      target: `≤ ${GATEWAY_TARGETS.roundTripRatio}× echo`,
      pass: g.p50 <= GATEWAY_TARGETS.roundTripRatio * e.p50,
    });
    row({
      bench: 'gateway tool call p99',
      figure: ms(g.p99, 3),
      reference: `raw ws echo ${ms(e.p99, 3)}`,
      ratio: ratio(g.p99 / e.p99),
      target: '(info)',
      pass: undefined,
    });
    row({
      bench: 'gateway sustained calls',
      figure: `${rate(t.gateway.rate)} calls`,
      reference: `raw ws echo ${rate(t.echo.rate)}`,
      ratio: pct(t.gateway.rate / t.echo.rate),
      target: '(info)',
      pass: undefined,
    });
  } catch (e) {
    failed('gateway tool call', e);
  }
  try {
    const r = await runGatewayRss(log);
    log(
      `  ${r.bound}/${r.providers} providers bound in ${ms(r.connectMs, 0)}; gateway VmRSS idle ${mb(r.idleKb)}, with them ${mb(r.loadedKb)} (peak ${mb(r.hwmKb)}), ~${((r.growthKb * 1024) / r.providers / 1024).toFixed(1)} kB per provider`,
    );
    row({
      bench: `gateway RSS, ${r.providers} providers`,
      figure: `+${mb(r.growthKb)}`,
      reference: `idle gateway ${mb(r.idleKb)}; ${r.bound} bound`,
      ratio: ratio(r.loadedKb / r.idleKb),
      target: `≤ +${GATEWAY_TARGETS.rssGrowthMb} MB`,
      pass: r.bound === r.providers && r.growthKb <= GATEWAY_TARGETS.rssGrowthMb * 1024,
    });
  } catch (e) {
    failed('gateway RSS', e);
  }
}

// ---------------------------------------------------------------- openctx

async function openctx(): Promise<void> {
  try {
    const r = await runOpenCtx(log);
    const { withHang: h, baseline: b } = r;
    const line = (name: string, x: typeof h): string =>
      `  ${name.padEnd(24)}  p50 ${ms(x.times.p50)}  p95 ${ms(x.times.p95)}  p99 ${ms(x.times.p99)}  min ${ms(x.times.min)}  max ${ms(x.times.max)}; ` +
      `all ${r.fast} fast providers' ${r.mentionsEach} mentions in ${x.complete}/${x.times.n} answers (fewest fast providers in one: ${x.minFast}, up to ${x.perAnswer} mentions/answer)`;
    log(line(`${h.providers} providers (1 hanging)`, h));
    log(line(`${b.providers} fast only`, b));
    log(`  mentions from the hanging provider: ${h.fromHanging} in ${h.times.n} answers`);
    const budget = r.deadlineMs + OPENCTX_SLACK_MS;
    row({
      bench: `openctx queryContext p95, 1 of ${h.providers} hanging`,
      figure: ms(h.times.p95),
      reference: `p50 ${ms(h.times.p50)}, p99 ${ms(h.times.p99)}; deadline ${r.deadlineMs} ms`,
      ratio: `+${ms(h.times.p95 - r.deadlineMs)} over deadline`,
      target: `≤ deadline + ${OPENCTX_SLACK_MS} ms (${budget} ms)`,
      pass: h.times.p95 <= budget,
    });
    row({
      bench: 'openctx fast mentions kept',
      figure: `${h.complete}/${h.times.n} answers complete`,
      reference: `${r.fast}×${r.mentionsEach} fast; ${h.fromHanging} from the hanging one`,
      ratio: pct(h.complete / h.times.n),
      target: 'all complete, none hanging',
      pass: h.complete === h.times.n && h.fromHanging === 0,
    });
    row({
      bench: `openctx queryContext p95, ${b.providers} fast only`,
      figure: ms(b.times.p95),
      reference: `p50 ${ms(b.times.p50)}; ${b.complete}/${b.times.n} complete`,
      ratio: `${pct(b.times.p95 / r.deadlineMs)} of deadline`,
      target: '(info: baseline)',
      pass: undefined,
    });
  } catch (e) {
    failed('openctx', e);
  }
}

// ---------------------------------------------------------------- lsp

async function lsp(): Promise<void> {
  try {
    const r = await runLsp(log);
    const line = (name: string, x: { p50: number; p95: number; min: number; max: number; n: number }): string =>
      `  ${name.padEnd(34)} p50 ${ms(x.p50)}  p95 ${ms(x.p95)}  min ${ms(x.min)}  max ${ms(x.max)}  (${x.n} edits)`;
    log(line('patchbay afterFileChange', r.patchbay));
    log(`    breaking edits p50 ${ms(r.patchbayBreak.p50)}, fixing edits p50 ${ms(r.patchbayFix.p50)}`);
    log(line('direct, first matching publish', r.direct));
    log(`    breaking edits p50 ${ms(r.directBreak.p50)}, fixing edits p50 ${ms(r.directFix.p50)}`);
    log(line(`direct, then ${LSP_SETTLE_MS} ms quiet`, r.directSettled));
    row({
      bench: 'lsp fresh diagnostics p50',
      figure: ms(r.patchbay.p50, 1),
      reference: `direct ${ms(r.direct.p50, 1)}`,
      ratio: ratio(r.patchbay.p50 / r.direct.p50),
      target: `≤ ${LSP_TARGET}× direct`,
      pass: r.patchbay.p50 <= LSP_TARGET * r.direct.p50,
    });
    row({
      bench: 'lsp fresh diagnostics p95',
      figure: ms(r.patchbay.p95, 1),
      reference: `direct ${ms(r.direct.p95, 1)}`,
      ratio: ratio(r.patchbay.p95 / r.direct.p95),
      target: `≤ ${LSP_TARGET}× direct`,
      pass: r.patchbay.p95 <= LSP_TARGET * r.direct.p95,
    });
    row({
      bench: `lsp p50 vs direct + ${LSP_SETTLE_MS} ms quiet`,
      figure: ms(r.patchbay.p50, 1),
      reference: `direct settled ${ms(r.directSettled.p50, 1)}`,
      ratio: ratio(r.patchbay.p50 / r.directSettled.p50),
      target: '(info: same settle rule)',
      pass: undefined,
    });
  } catch (e) {
    failed('lsp', e);
  }
}

// ---------------------------------------------------------------- inline completion

async function inline(): Promise<void> {
  try {
    const r = await runInline(log);
    for (const x of r.rows) {
      row({
        bench: `inline completion (${x.name}) added p50`,
        figure: `+${ms(x.addedP50, 3)}`,
        reference: `patchbay ${ms(x.patchbay.p50, 3)} vs direct ${ms(x.direct.p50, 3)}, ${x.calls} calls`,
        ratio: ratio(x.patchbay.p50 / x.direct.p50),
        target: x.target ? `≤ ${INLINE_TARGET_MS} ms` : '(info)',
        pass: x.target ? x.addedP50 <= INLINE_TARGET_MS : undefined,
      });
      row({
        bench: `inline completion (${x.name}) added p95`,
        figure: `+${ms(x.addedP95, 3)}`,
        reference: `patchbay ${ms(x.patchbay.p95, 3)} vs direct ${ms(x.direct.p95, 3)}`,
        ratio: ratio(x.patchbay.p95 / x.direct.p95),
        target: '(info)',
        pass: undefined,
      });
    }
  } catch (e) {
    failed('inline completion', e);
  }
}

// ---------------------------------------------------------------- local

async function local(): Promise<void> {
  try {
    const r = await runLocal(log);
    const all = (xs: LocalRun[], f: (x: LocalRun) => number, digits = 0): string => xs.map((x) => f(x).toFixed(digits)).join(', ');
    const first = (x: LocalRun): number => x.firstMs;
    const tps = (x: LocalRun): number => x.tokensPerSec;
    const st = r.directStages;
    log(`  cold, first token   patchbay: ${all(r.patchbay.cold, first)} ms;  direct: ${all(r.direct.cold, first)} ms`);
    log(
      `    direct cold stages (medians, since the import began): import ${ms(st.importMs, 0)}, getLlama ${ms(st.llamaMs, 0)}, loadModel ${ms(st.loadMs, 0)}, context ${ms(st.contextMs, 0)}, first token ${ms(r.coldMs.direct, 0)}`,
    );
    log(`  warm, first token   patchbay: ${all(r.patchbay.warm, first)} ms;  direct: ${all(r.direct.warm, first)} ms`);
    log(`  tokens/s, warm      patchbay: ${all(r.patchbay.warm, tps)};  direct: ${all(r.direct.warm, tps)}`);
    log(`  tokens/s, cold      patchbay: ${all(r.patchbay.cold, tps)};  direct: ${all(r.direct.cold, tps)}`);
    log(
      `  prompt: patchbay ${r.promptTokens.patchbay} tokens, direct ${r.promptTokens.direct} (${r.promptChars} chars + ${r.tools} tools); text chunks per reply: patchbay ${r.chunks.patchbay}, direct ${r.chunks.direct}`,
    );
    // Every local figure is patchbay against node-llama-cpp directly, for information (the issue sets no target).
    const versus = (bench: string, pair: { patchbay: number; direct: number }, show: (x: number) => string, target = '(info)'): void =>
      row({ bench, figure: show(pair.patchbay), reference: `direct ${show(pair.direct)}`, ratio: ratio(pair.patchbay / pair.direct), target, pass: undefined });
    const msec = (x: number): string => ms(x, 0);
    versus('local model load', r.loadMs, msec);
    versus('local cold start → first token', r.coldMs, msec);
    versus('local warm → first token (new chat)', r.warmMs, msec);
    versus('local tokens/s (warm)', r.tokensPerSec, (x) => `${x.toFixed(0)} tokens/s`);
    versus('local prompt size', r.promptTokens, (x) => `${x} tokens`, '(info: same prompt)');
  } catch (e) {
    failed('local', e);
  }
}

// ---------------------------------------------------------------- cache

async function cache(): Promise<void> {
  try {
    log('cache: a 40-turn chat against the fake Anthropic server, with and without prompt caching…');
    const on = await runCacheChat(log);
    const off = await runCacheChat(log, 'none');
    row({
      bench: `prompt cache reads, ${on.turns} turns`,
      figure: `${pct(on.overall)} of input`,
      reference: `cacheRetention none ${pct(off.overall)}`,
      ratio: '—',
      target: '(info)',
      pass: undefined,
    });
    row({
      bench: 'prompt cache reads after turn 2',
      figure: `${pct(on.afterTurn2)} of input`,
      reference: `cacheRetention none ${pct(off.afterTurn2)}`,
      ratio: '—',
      target: `≥ ${pct(CACHE_SHARE_TARGET)}`,
      pass: on.afterTurn2 >= CACHE_SHARE_TARGET,
    });
  } catch (e) {
    failed('prompt cache reads', e);
  }
}

// ---------------------------------------------------------------- main

function table(): void {
  const head: Row = { bench: 'benchmark', figure: 'figure', reference: 'measured alongside', ratio: 'ratio', target: 'target', pass: undefined };
  const cells = (r: Row, isHead = false): string[] => [r.bench, r.figure, r.reference, r.ratio, r.target, isHead ? 'result' : r.pass === undefined ? '—' : r.pass ? 'PASS' : 'FAIL'];
  const all = [cells(head, true), ...rows.map((r) => cells(r))];
  const widths = all[0].map((_, i) => Math.max(...all.map((c) => c[i].length)));
  const line = (c: string[]): string =>
    c
      .map((x, i) => x.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  log('');
  log(line(all[0]));
  log(widths.map((w) => '─'.repeat(w)).join('  '));
  for (const c of all.slice(1)) log(line(c));
}

// ---------------------------------------------------------------- rules

async function rules(): Promise<void> {
  try {
    log(`rules: system prompt assembly with 50 rules and 50 skills…`);
    const r = await runPromptRules(log);
    row({
      bench: `system prompt assembly p95, ${r.rules} rules + ${r.skills} skills`,
      figure: ms(r.withFiles.p95, 3),
      reference: `no files ${ms(r.empty.p95, 3)}; CPU p95 ${ms(r.withFilesCpu.p95, 3)}`,
      ratio: ratio(r.withFiles.p95 / r.empty.p95),
      target: `≤ ${PROMPT_TARGET_MS} ms`,
      pass: r.withFiles.p95 <= PROMPT_TARGET_MS,
    });
  } catch (e) {
    failed('rules', e);
  }
}

// ---------------------------------------------------------------- replay

async function replay(): Promise<void> {
  try {
    log(`replay: chat/open of a 200-message chat with 50 tool calls…`);
    const r = await runReplay(log);
    row({
      bench: `chat/open replay p50, 200 messages with ${r.calls} tool calls`,
      figure: `${ms(r.withCalls.p50)} (p95 ${ms(r.withCalls.p95)}; ${r.contentsWithCalls} contents)`,
      reference: `text only ${ms(r.textOnly.p50)} (p95 ${ms(r.textOnly.p95)}; ${r.contentsTextOnly} contents)`,
      ratio: ratio(r.withCalls.p50 / r.textOnly.p50),
      target: `≤ ${REPLAY_TARGET_MS} ms`,
      pass: r.withCalls.p50 <= REPLAY_TARGET_MS,
    });
  } catch (e) {
    failed('replay', e);
  }
}

// ---------------------------------------------------------------- sandbox

async function sandbox(): Promise<void> {
  try {
    const r = await runSandbox(log);
    for (const leg of LEGS) {
      const x = r.legs[leg];
      log(`  ${LEG_NAMES[leg].padEnd(24)} median ${ms(x.p50)}  p90 ${ms(x.p90)}  (min ${ms(x.min)}, max ${ms(x.max)})`);
    }
    for (const [name, h] of Object.entries(r.homes)) {
      log(`  ${name} home, in process per call: plan(roots) ${h.planUs.toFixed(0)} µs, wrap() ${h.wrapUs.toFixed(0)} µs; ${h.extraMounts} mounts + ${h.remounts} remounts over bare bwrap`);
    }
    log(
      `  per round: patchbay full / bwrap with its args ${ratio(r.perRound('full', 'policy'))} (patchbay's own code); bwrap with its args / bare ${ratio(r.perRound('policy', 'bwrap'))} (the mounts)`,
    );
    const b = r.legs.bwrap;
    for (const leg of ['plain', 'full'] as const) {
      const a = r.legs[leg];
      row({
        bench: `sandboxed true via shell_command path, ${leg} home (median)`,
        figure: `${ms(a.p50)} (p90 ${ms(a.p90)})`,
        reference: `bare bwrap ${ms(b.p50)} (p90 ${ms(b.p90)})`,
        ratio: `${ratio(a.p50 / b.p50)} (per round ${ratio(r.perRound(leg, 'bwrap'))})`,
        target: `≤ ${SANDBOX_TARGET}× bare bwrap`,
        pass: a.p50 / b.p50 <= SANDBOX_TARGET,
      });
    }
    const p = r.legs.policy;
    row({
      bench: 'shell_command path vs bwrap with the same args, full home',
      figure: ms(r.legs.full.p50),
      reference: `bwrap, same args ${ms(p.p50)} (p90 ${ms(p.p90)})`,
      ratio: `${ratio(r.legs.full.p50 / p.p50)} (per round ${ratio(r.perRound('full', 'policy'))})`,
      target: "(info: patchbay's own code)",
      pass: undefined,
    });
    const c = r.legs.sh;
    row({
      bench: `bare bwrap ${r.version} vs sh -c true (median)`,
      figure: `${ms(b.p50)} (p90 ${ms(b.p90)})`,
      reference: `sh ${ms(c.p50)} (p90 ${ms(c.p90)})`,
      ratio: `${ratio(b.p50 / c.p50)} (per round ${ratio(r.perRound('bwrap', 'sh'))})`,
      target: '(info)',
      pass: undefined,
    });
  } catch (e) {
    failed('sandbox', e);
  }
}

const ALL = [
  'before-after',
  'workspaces',
  'relay',
  'acp-relay',
  'framing',
  'startup',
  'acp-startup',
  'rss',
  'querycontext',
  'mcp',
  'gateway',
  'flood',
  'jobs',
  'openctx',
  'lsp',
  'inline',
  'rules',
  'replay',
  'local',
  'cache',
  'sandbox',
];

/** The build to compare with (bench/baseline.ts), resolved (and built if need be) in main(). */
let baseline: Build | undefined;

async function main(): Promise<void> {
  const { rev, rest } = takeBaselineArg(process.argv.slice(2));
  const only = rest.map((a) => a.toLowerCase());
  const want = (name: string): boolean => !only.length || only.includes(name);
  for (const a of only) if (!ALL.includes(a)) log(`unknown benchmark "${a}" (known: ${ALL.join(', ')})`);
  log(`patchbay bench — node ${process.version}, ${process.platform}/${process.arch}`);
  const t0 = now();
  try {
    baseline = resolveBaseline(rev, log);
    if (baseline) log(`baseline: ${baseline.describe}`);
  } catch (e) {
    failed('baseline', e);
  }
  if (want('before-after')) await beforeAfter();
  if (want('workspaces')) await workspaces();
  if (want('relay')) await relay();
  if (want('acp-relay')) await acpRelay();
  if (want('framing')) await framing();
  if (want('startup')) await startup();
  if (want('acp-startup')) await acpStartup();
  if (want('rss')) await rss();
  if (want('querycontext')) {
    await queryContextStdio(await queryContextInProcess());
  }
  if (want('mcp')) await mcp();
  if (want('gateway')) await gateway();
  if (want('flood')) await flood();
  if (want('jobs')) await jobs();
  if (want('openctx')) await openctx();
  if (want('lsp')) await lsp();
  if (want('inline')) await inline();
  if (want('rules')) await rules();
  if (want('replay')) await replay();
  if (want('local')) await local();
  if (want('cache')) await cache();
  if (want('sandbox')) await sandbox();
  table();
  log(`\n(${((now() - t0) / 1000).toFixed(1)} s; figures only — this always exits 0)`);
}

// Figures, never a failing exit: report stray errors and carry on.
process.on('uncaughtException', (e) => log(`bench: uncaught ${e.stack ?? e.message}`));
process.on('unhandledRejection', (e) => log(`bench: unhandled rejection ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`));

main()
  .catch((e: unknown) => log(`bench crashed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`))
  .finally(() => {
    cleanupTemps();
    process.exitCode = 0;
  });
