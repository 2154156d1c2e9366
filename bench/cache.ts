/**
 * Cache-stable prompts (issue 18, point 7), two figures:
 *
 * 1. Prompt-cache reads over a 40-turn chat: the real `patchbay server` over stdio against the
 *    fake Anthropic server, whose prompt cache reports reads and writes from the request's
 *    cache_control breakpoints the way Anthropic does (test/fixtures/fake-llm-cache.ts). A
 *    realistic system prompt (~3,000 tokens of project guidelines in the config's `systemPrompt`)
 *    and patchbay's native tools; each turn, the model reads a file (one tool call) and answers.
 *    Figure: the share of input tokens read from the cache, over the whole chat and after turn 2
 *    (target ≥ 90%), and the same chat with `cacheRetention: "none"` for the difference.
 * 2. System prompt assembly: `chatSystemPrompt` through a real `Workspace`'s prompt sources, in a
 *    temp workspace holding 50 rules and 50 skills on disk; p50 / p95 over many requests
 *    (target p95 ≤ 5 ms). The rules and skills loaders come from other branches: when the
 *    workspace does not offer the files' sections itself, the bench registers a stand-in source
 *    that reads them as a loader would (listed once, each file's mtime checked per request,
 *    re-read when it changed) and says so.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { FakeLlm } from '../test/fixtures/fake-llm.js';
import { agentFileSources, listAgentFiles } from '../src/config/agent-files.js';
import { parseFrontMatter } from '../src/config/frontmatter.js';
import type { LiveChat } from '../src/core/chat.js';
import type { ChatDeps } from '../src/core/deps.js';
import type { PromptSection } from '../src/core/prompt-sections.js';
import { chatSystemPrompt } from '../src/core/turn.js';
import { Workspace } from '../src/runtime/workspace.js';
import { now, Server, summarize, tempDir } from './util.js';

export const CACHE_TURNS = Number(process.env.BENCH_CACHE_TURNS ?? 40);
export const CACHE_SHARE_TARGET = 0.9;
export const ASSEMBLY_TARGET_MS = 5;

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

export interface AssemblyRun {
  p50: number;
  p95: number;
  samples: number;
  /** Sections of the system prompt, and its length in characters. */
  sections: number;
  chars: number;
  /** The rules and skills came from the bench's stand-in source, not the workspace's own loaders. */
  standIn: boolean;
  /**
   * p95 of the CPU time the process spent per request: unlike the wall time it leaves out the
   * waits of a machine whose cores other work holds (the 1-minute load average is given with it).
   */
  cpuP95: number;
  load: number;
}

const RULES = 50;
const SKILLS = 50;
const SAMPLES = 500;

/** 50 rules in `.patchbay/rules`, 50 skills in `.agents/skills/<name>/SKILL.md`, as ECA lays them out. */
function writeAgentFiles(root: string): void {
  const rules = join(root, '.patchbay', 'rules');
  mkdirSync(rules, { recursive: true });
  for (let i = 1; i <= RULES; i++) {
    const body = Array.from({ length: 8 }, (_, l) => `- bench-rule-${i} point ${l + 1}: prefer explicit types at module boundaries and early returns over nesting.`).join('\n');
    writeFileSync(join(rules, `bench-rule-${i}.md`), `---\ndescription: House rule ${i}\n---\n${body}\n`);
  }
  for (let i = 1; i <= SKILLS; i++) {
    const dir = join(root, '.agents', 'skills', `bench-skill-${i}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'SKILL.md'),
      `---\nname: bench-skill-${i}\ndescription: Does task ${i} the way this project wants it done, step by step.\n---\n# Skill ${i}\n${'Steps to follow. '.repeat(40)}\n`,
    );
  }
}

/**
 * Stands in for the rules and skills loaders: every rule's body and the skills catalog (names and
 * descriptions only), as stable sections; files listed once, each checked by mtime per request.
 */
async function standInSource(ws: Workspace): Promise<void> {
  const loc = { roots: ws.roots, env: process.env, homeDir: tempDir('pb-bench-cache-home-') };
  const rules = await listAgentFiles(agentFileSources('rules', loc), (n) => n.endsWith('.md'));
  const skills = await listAgentFiles(agentFileSources('skills', loc), (n) => n === 'SKILL.md');
  const cache = new Map<string, { mtimeMs: number; data: Record<string, unknown>; body: string }>();
  const read = (path: string) => {
    const mtimeMs = statSync(path).mtimeMs;
    let hit = cache.get(path);
    if (!hit || hit.mtimeMs !== mtimeMs) {
      const fm = parseFrontMatter(readFileSync(path, 'utf8'));
      hit = { mtimeMs, data: fm.data, body: fm.body };
      cache.set(path, hit);
    }
    return hit;
  };
  ws.prompt.set('bench-rules', () => rules.files.map((f): PromptSection => ({ id: `rule:${f.path}`, text: read(f.path).body, stable: true, order: 20 })));
  ws.prompt.set('bench-skills', () => {
    const lines = skills.files.map((f) => {
      const d = read(f.path).data;
      return `- ${String(d.name)}: ${String(d.description)}`;
    });
    return [{ id: 'skills', text: `Skills you can load when a task calls for one:\n${lines.join('\n')}`, stable: true, order: 30 }];
  });
}

export async function runPromptAssembly(log: (s: string) => void): Promise<AssemblyRun> {
  const home = tempDir('pb-bench-prompt-home-');
  const root = tempDir('pb-bench-prompt-ws-');
  writeAgentFiles(root);
  const quiet = { event() {}, opened() {}, cleared() {}, deleted() {}, showMessage() {} };
  const ws = await Workspace.create({
    roots: [root],
    env: { HOME: home, PATCHBAY_HOME: join(home, '.patchbay'), XDG_CONFIG_HOME: join(home, '.config'), PATCHBAY_LOCAL_MODEL: 'off' },
    frontEnd: { canAsk: false, canShowDiffs: false },
    events: quiet,
    logLevel: 'error',
    initializationOptions: { systemPrompt: SYSTEM_PROMPT },
  });
  try {
    // Only what chatSystemPrompt reads of a chat and of the chat service's deps.
    const deps = {
      roots: () => ws.roots,
      config: () => ws.config,
      promptSections: (scope) => ws.prompt.sections(scope),
    } as Pick<ChatDeps, 'roots' | 'config' | 'promptSections'> as ChatDeps;
    const chat = { id: 'bench-chat', stored: [] } as unknown as LiveChat;
    const tools = () => ws.tools.visible({ agent: 'code', approval: ws.config.toolCall.approval, disabled: ws.config.disabledTools, chatId: chat.id });
    const offered = chatSystemPrompt(chat, 'code', undefined, tools(), deps).text;
    const standIn = !(offered.includes('bench-rule-50') && offered.includes('bench-skill-50'));
    if (standIn) await standInSource(ws);
    const pin = { autoSync: false, notice: () => {} };
    const times: number[] = [];
    const cpu: number[] = [];
    let text = '';
    for (let i = 0; i < SAMPLES + 20; i++) {
      const c = process.cpuUsage();
      const t = now();
      // As a turn asks for it: with the chat's pinned stable part (core/pinned-prompt.ts).
      text = chatSystemPrompt(chat, 'code', undefined, tools(), deps, pin).text;
      const used = process.cpuUsage(c);
      if (i >= 20) (times.push(now() - t), cpu.push((used.user + used.system) / 1000));
    }
    if (!text.includes('bench-rule-50') || !text.includes('bench-skill-50')) throw new Error('the system prompt lacks the rules or skills');
    const sum = summarize(times);
    const sections = ws.prompt.sections({ chatId: chat.id, agent: 'code', roots: ws.roots, stored: [] }).length;
    log(`  system prompt: ${sections} sections, ${text.length} characters${standIn ? ' (rules and skills from the bench stand-in source)' : ''}`);
    return { p50: sum.p50, p95: sum.p95, samples: times.length, sections, chars: text.length, standIn, cpuP95: summarize(cpu).p95, load: loadavg()[0] };
  } finally {
    await ws.dispose();
  }
}
