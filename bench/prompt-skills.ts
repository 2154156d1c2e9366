/**
 * The skills half of the prompt-assembly target (issue 18: "50 rules and 50 skills"): 50 SKILL.md
 * folders in the workspace, each with a script beside it, installed as the workspace installs them
 * (runtime/skills.ts), so every measured request pays the catalog's mtime checks.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configSchema } from '../src/config/schema.js';
import { CommandRegistry } from '../src/core/commands.js';
import type { PromptSources } from '../src/core/prompt-sections.js';
import type { RuntimeBoard } from '../src/core/runtime-board.js';
import { ToolRegistry } from '../src/core/tool-registry.js';
import { SkillCatalog } from '../src/runtime/skills.js';

export const BENCH_SKILLS = 50;

export function addSkills(prompt: PromptSources, board: RuntimeBoard, root: string, home: string, count = BENCH_SKILLS): void {
  for (let i = 0; i < count; i++) {
    const dir = join(root, '.agents', 'skills', `skill-${i}`);
    mkdirSync(join(dir, 'scripts'), { recursive: true });
    writeFileSync(join(dir, 'SKILL.md'), `---\nname: skill-${i}\ndescription: Does task ${i} the way this team does it.\n---\n\n${'Step by step. '.repeat(40)}\n`);
    writeFileSync(join(dir, 'scripts', 'run.sh'), 'echo ok\n');
  }
  const config = configSchema.parse({});
  new SkillCatalog({
    roots: () => [root],
    config: () => config,
    trustedFolder: () => true,
    pureConfig: () => false,
    env: { XDG_CONFIG_HOME: join(home, '.config') },
    homeDir: home,
    board,
    tools: new ToolRegistry(),
    commands: new CommandRegistry(),
    prompt,
  }).install();
}
