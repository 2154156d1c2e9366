/**
 * System prompt assembly with 50 rules and 50 skills (issue 18's target: p95 ≤ 5 ms), the one
 * bench of it: `chatSystemPrompt` of one request through a real `Workspace` and its own loaders
 * (runtime/instructions.ts for AGENTS.md and rules, runtime/skills.ts for the skills catalog), in
 * process. On disk: AGENTS.md files of the user, a git root, a parent and the workspace folder;
 * 30 static and 20 path-scoped rules; 50 `SKILL.md` folders; the chat has 200 messages with files
 * in play (so the path-scoped rules are matched every request). Every request stats what it read
 * and re-reads nothing while nothing changed, which is what this measures, with the workspace's
 * tool list for the request. Measured alongside: the same workspace code with no files at all, and
 * each request's CPU time (on a machine whose cores are busy with other work, the wall-clock p95
 * counts the time the process waited for a core).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LiveChat } from '../src/core/chat/chat.js';
import type { ChatDeps } from '../src/core/deps.js';
import type { StoredMessage } from '../src/core/chat/stored-message.js';
import { chatSystemPrompt } from '../src/core/turn/turn.js';
import { Workspace } from '../src/runtime/workspace.js';
import { now, summarize, tempDir, type Summary } from './util.js';

export const PROMPT_TARGET_MS = 5;
const RULES = { static: 30, pathScoped: 20 };
const SKILLS = 50;
const RUNS = 1000;
const WARM = 50;

export interface PromptRun {
  rules: number;
  skills: number;
  withFiles: Summary;
  /** The same requests' CPU time (user + system): what the wall time is when no other process takes the cores. */
  withFilesCpu: Summary;
  empty: Summary;
  promptChars: number;
}

function write(base: string, rel: string, text: string): void {
  mkdirSync(join(base, rel, '..'), { recursive: true });
  writeFileSync(join(base, rel), text);
}

/** A git repository `repo` holding the workspace folder `packages/app`, and the user's files in `home`. */
function writeFiles(repo: string, home: string): string {
  mkdirSync(join(repo, '.git'));
  const root = join(repo, 'packages', 'app');
  write(repo, 'AGENTS.md', 'Monorepo conventions.\n'.repeat(40));
  write(repo, 'packages/CLAUDE.md', 'Package rules.\n'.repeat(40));
  write(root, 'AGENTS.md', 'App conventions.\n'.repeat(80));
  write(home, '.config/patchbay/AGENTS.md', 'My preferences.\n'.repeat(20));
  for (let i = 0; i < RULES.static; i++) write(root, `.patchbay/rules/static-${i}.md`, `---\nagent: code\n---\nStatic rule ${i}: ${'keep it tidy. '.repeat(20)}`);
  for (let i = 0; i < RULES.pathScoped; i++) write(root, `.patchbay/rules/scoped/r${i}.md`, `---\npaths: ["src/m${i}/**.ts", "test/m${i}/**.ts"]\n---\nScoped rule ${i}: ${'be careful. '.repeat(20)}`);
  for (let i = 1; i <= SKILLS; i++) {
    write(
      root,
      `.agents/skills/bench-skill-${i}/SKILL.md`,
      `---\nname: bench-skill-${i}\ndescription: Does task ${i} the way this project wants it done, step by step.\n---\n# Skill ${i}\n${'Steps to follow. '.repeat(40)}\n`,
    );
  }
  return root;
}

/** 200 messages: @-mentioned files (some under the path-scoped rules' globs) and read_file calls. */
function chatMessages(root: string): StoredMessage[] {
  const stored: StoredMessage[] = [];
  for (let i = 0; i < 100; i++) {
    stored.push({ role: 'user', text: `step ${i}`, contextText: `<file path="${join(root, `src/m${i % 40}/f${i}.ts`)}">\nexport {};\n</file>` });
    stored.push({
      role: 'tool',
      toolCallId: `t${i}`,
      name: 'read_file',
      server: 'patchbay',
      origin: 'native',
      args: { path: join(root, `lib/x${i}.ts`) },
      outcome: 'called',
      error: false,
      outputs: [],
      llmText: '',
      totalTimeMs: 1,
    });
  }
  return stored;
}

async function measure(root: string, home: string, stored: StoredMessage[]): Promise<{ s: Summary; cpu: Summary; text: string }> {
  const quiet = { event() {}, opened() {}, cleared() {}, deleted() {}, showMessage() {} };
  const ws = await Workspace.create({
    roots: [root],
    env: { HOME: home, PATCHBAY_HOME: join(home, '.patchbay'), XDG_CONFIG_HOME: join(home, '.config'), PATCHBAY_LOCAL_MODEL: 'off' },
    frontEnd: { canAsk: false, canShowDiffs: false },
    events: quiet,
    logLevel: 'error',
  });
  try {
    // Only what chatSystemPrompt reads of a chat and of the chat service's deps.
    const deps = { roots: () => ws.roots, config: () => ws.config, promptSections: (scope) => ws.prompt.sections(scope) } as Pick<ChatDeps, 'roots' | 'config' | 'promptSections'> as ChatDeps;
    const chat = { id: 'bench-chat', stored } as unknown as LiveChat;
    const request = (): string => {
      const tools = ws.tools.visible({ agent: 'code', approval: ws.config.toolCall.approval, disabled: ws.config.disabledTools, chatId: chat.id });
      return chatSystemPrompt(chat, 'code', 'fake/m1', tools, deps).text;
    };
    const times: number[] = [];
    const cpu: number[] = [];
    let text = '';
    for (let i = 0; i < RUNS + WARM; i++) {
      const c = process.cpuUsage();
      const t = now();
      text = request();
      const wall = now() - t;
      const used = process.cpuUsage(c);
      if (i >= WARM) (times.push(wall), cpu.push((used.user + used.system) / 1000));
    }
    return { s: summarize(times), cpu: summarize(cpu), text };
  } finally {
    await ws.dispose();
  }
}

export async function runPromptRules(log: (s: string) => void): Promise<PromptRun> {
  const home = tempDir('pb-bench-home-');
  const root = writeFiles(tempDir('pb-bench-rules-'), home);
  const withFiles = await measure(root, home, chatMessages(root));
  // The loaders' work must be in the prompt measured, or the figure says nothing.
  for (const mark of ['App conventions.', `Static rule ${RULES.static - 1}:`, `scoped/r${RULES.pathScoped - 1}.md`, 'Scoped rule 0:', `bench-skill-${SKILLS}`]) {
    if (!withFiles.text.includes(mark)) throw new Error(`the system prompt lacks ${JSON.stringify(mark)}`);
  }
  const empty = await measure(tempDir('pb-bench-empty-'), tempDir('pb-bench-home-'), []);
  const n = RULES.static + RULES.pathScoped;
  log(
    `  system prompt, 4 AGENTS.md files + ${n} rules + ${SKILLS} skills + 200 messages: p50 ${withFiles.s.p50.toFixed(3)} ms  p95 ${withFiles.s.p95.toFixed(3)} ms (CPU p50 ${withFiles.cpu.p50.toFixed(3)} ms p95 ${withFiles.cpu.p95.toFixed(3)} ms; ${withFiles.text.length} chars)`,
  );
  log(`  system prompt, no files:                                             p50 ${empty.s.p50.toFixed(3)} ms  p95 ${empty.s.p95.toFixed(3)} ms`);
  return { rules: n, skills: SKILLS, withFiles: withFiles.s, withFilesCpu: withFiles.cpu, empty: empty.s, promptChars: withFiles.text.length };
}
