/**
 * System prompt assembly with project instructions and 50 rules (issue 18 point 1; the target
 * counts 50 skills too, which point 2 adds as its own prompt source): in process, the whole
 * `systemPrompt` of one request — AGENTS.md files of a git root, a parent and the workspace
 * folder, 30 static and 20 path-scoped rules, a 200-message chat with files in play — vs. the
 * same assembly with no files at all. Every request stats the files it read (no re-read while
 * nothing changed), which is what this measures. Target: p95 ≤ 5 ms.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configSchema } from '../src/config/schema.js';
import { PromptSources, type PromptScope } from '../src/core/prompt-sections.js';
import { RuntimeBoard } from '../src/core/runtime-board.js';
import type { StoredMessage } from '../src/core/stored-message.js';
import { systemPrompt } from '../src/core/system-prompt.js';
import { ProjectInstructions } from '../src/runtime/instructions.js';
import { addSkills, BENCH_SKILLS } from './prompt-skills.js';
import { now, summarize, tempDir, type Summary } from './util.js';

export const PROMPT_TARGET_MS = 5;
const RUNS = 2000;

export interface PromptRun {
  rules: number;
  withFiles: Summary;
  empty: Summary;
  promptChars: number;
}

function write(base: string, rel: string, text: string): void {
  mkdirSync(join(base, rel, '..'), { recursive: true });
  writeFileSync(join(base, rel), text);
}

function measure(root: string, home: string, stored: StoredMessage[], skills: boolean): { s: Summary; chars: number } {
  const config = configSchema.parse({});
  const prompt = new PromptSources();
  const board = new RuntimeBoard();
  const pi = new ProjectInstructions({
    roots: () => [root],
    config: () => config,
    env: { XDG_CONFIG_HOME: join(home, '.config') },
    homeDir: home,
    trusted: () => true,
    board,
    stored: () => stored,
  });
  prompt.set('instructions', (scope) => pi.sections(scope));
  if (skills) addSkills(prompt, board, root, home);
  const scope: PromptScope = { chatId: 'c', agent: 'code', model: 'fake/m1', roots: [root], stored };
  const times: number[] = [];
  let chars = 0;
  for (let i = 0; i < RUNS + 100; i++) {
    const t = now();
    chars = systemPrompt({ agent: 'code', roots: [root], tools: [], sections: prompt.sections(scope) }).text.length;
    if (i >= 100) times.push(now() - t);
  }
  return { s: summarize(times), chars };
}

export function runPromptRules(log: (s: string) => void): PromptRun {
  const repo = tempDir('pb-bench-rules-');
  const home = tempDir('pb-bench-home-');
  mkdirSync(join(repo, '.git'));
  const root = join(repo, 'packages', 'app');
  write(repo, 'AGENTS.md', 'Monorepo conventions.\n'.repeat(40));
  write(repo, 'packages/CLAUDE.md', 'Package rules.\n'.repeat(40));
  write(root, 'AGENTS.md', 'App conventions.\n'.repeat(80));
  write(home, '.config/patchbay/AGENTS.md', 'My preferences.\n'.repeat(20));
  for (let i = 0; i < 30; i++) write(root, `.patchbay/rules/static-${i}.md`, `---\nagent: code\n---\nStatic rule ${i}: ${'keep it tidy. '.repeat(20)}`);
  for (let i = 0; i < 20; i++) write(root, `.patchbay/rules/scoped/r${i}.md`, `---\npaths: ["src/m${i}/**.ts", "test/m${i}/**.ts"]\n---\nScoped rule ${i}: ${'be careful. '.repeat(20)}`);
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
  const withFiles = measure(root, home, stored, true);
  const empty = measure(tempDir('pb-bench-empty-'), tempDir('pb-bench-home-'), [], false);
  log(
    `  prompt assembly, 4 instructions files + 50 rules + ${BENCH_SKILLS} skills + 200 messages: p50 ${withFiles.s.p50.toFixed(3)} ms  p95 ${withFiles.s.p95.toFixed(3)} ms (${withFiles.chars} chars)`,
  );
  log(`  prompt assembly, no files:                                     p50 ${empty.s.p50.toFixed(3)} ms  p95 ${empty.s.p95.toFixed(3)} ms`);
  return { rules: 50, withFiles: withFiles.s, empty: empty.s, promptChars: withFiles.chars };
}
