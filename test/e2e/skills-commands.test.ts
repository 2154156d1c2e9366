/**
 * Skills and custom commands over real stdio, against the fake LLM server:
 *
 * - the system prompt carries only each skill's name and description, and the body reaches the
 *   model only after it calls `patchbay__skill` (ECA src/eca/features/prompt.clj
 *   `build-static-instructions`: the `<skills>` block; tools/skill.clj `skill`: "**Skill**",
 *   "**Base directory**", the body);
 * - `chat/queryCommands` lists custom commands with `type` "custom-prompt" and skills with "skill",
 *   their `arguments` as ECA derives them (commands.clj `all-commands`, `merge-command-args`;
 *   eca-emacs eca-chat-context.el `eca-chat--kind->symbol` keys on "custom-prompt");
 * - running `/weather Paris metric` and `/review-pr <url>` sends the rendered body as the prompt
 *   (commands.clj `handle-command!` and `substitute-args`), `/review-pr` alone "Load skill: …";
 * - `toolCall.approval` argsMatchers on `name` deny one skill (ECA docs/config/skills.md);
 * - bad files are told in the chat and listed by `/doctor` while the rest works.
 */
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

const REVIEW = '---\nname: review-pr\ndescription: Review a pull request given its URL\n---\n\nReview the following pull request: $ARGS\nBODY-MARKER-7731: check the tests.\n';
const WEATHER =
  '---\ndescription: Generate a weather report\narguments:\n  - name: city\n    description: City to report on\n  - name: units\n    description: metric or imperial\n    required: false\n---\nWrite a weather report for {{city}} using {{units}} units.\n';

async function boot(files: Record<string, string>, extra: Record<string, unknown> = {}) {
  const root = workspace({ 'a.txt': 'alpha\n', ...files });
  const p = track(new EcaProc({ home: tempDir(), config: fakeProviderConfig(llm().url, 'openai-chat', extra) }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === ECA.configUpdated.method);
  return { p, root };
}

const systemOf = (n: number): string => llm().requests[n].body.messages.find((m: any) => m.role === 'system').content;
const allText = (n: number): string => JSON.stringify(llm().requests[n].body.messages);
const lastUser = (n: number): string =>
  llm()
    .requests[n].body.messages.filter((m: any) => m.role === 'user')
    .at(-1).content;

describe('skills over ECA (prompt.clj, tools/skill.clj)', () => {
  // ECA prompt.clj `build-static-instructions` (the <skills> block) and tools/skill.clj `skill` (its result).
  it('only the description is in the system prompt; the body reaches the model after it calls patchbay__skill', async () => {
    const { p, root } = await boot({ '.agents/skills/review-pr/SKILL.md': REVIEW, '.agents/skills/review-pr/scripts/check.sh': 'echo ok\n' });
    // The editor's native tool list (sent at initialize) has it when there are skills (ECA `enabled-fn`).
    const native = await p.waitFor((m) => m.method === ECA.toolServerUpdated.method && m.params.name === 'ECA', 'the native tool server');
    expect(native.params.tools.map((t: any) => t.name)).toContain('skill');
    llm().script([{ toolCall: { id: 's1', name: 'patchbay__skill', args: { name: 'review-pr' } } }], [{ text: 'reviewed' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'please review my pull request' })).result.chatId;
    await p.turnDone(chatId);

    expect(systemOf(0)).toContain('<skill name="review-pr" description="Review a pull request given its URL"/>');
    expect(systemOf(0)).toContain('patchbay__skill');
    expect(allText(0)).not.toContain('BODY-MARKER-7731');
    expect(llm().requests[0].body.tools.map((t: any) => t.function.name)).toContain('patchbay__skill');

    // Read-only: run without asking, shown under ECA's server name.
    const run = p.contents(chatId).find((c) => c.content.type === 'toolCallRun')!.content;
    expect([run.name, run.server, run.manualApproval]).toEqual(['skill', 'eca', false]);
    const tool = llm().requests[1].body.messages.find((m: any) => m.role === 'tool');
    expect(tool.content).toContain('**Skill**: review-pr');
    expect(tool.content).toContain(`**Base directory**: ${root}/.agents/skills/review-pr`);
    expect(tool.content).toContain('- scripts/check.sh');
    expect(tool.content).toContain('BODY-MARKER-7731');
    expect(p.text(chatId)).toContain('reviewed');
  });

  // ECA docs/config/skills.md "Enable/disable specific skills": approval rules on eca__skill by `name`.
  it('a deny rule with argsMatchers on "name" refuses that skill only', async () => {
    const { p } = await boot(
      { '.agents/skills/review-pr/SKILL.md': REVIEW, '.eca/skills/lint-fix/SKILL.md': '---\nname: lint-fix\ndescription: Lint\n---\nLINT-BODY\n' },
      { toolCall: { approval: { deny: { eca__skill: { argsMatchers: { name: ['review-.*'] } } } } } },
    );
    llm().script([{ toolCall: { id: 'd1', name: 'patchbay__skill', args: { name: 'review-pr' } } }, { toolCall: { id: 'd2', name: 'patchbay__skill', args: { name: 'lint-fix' } } }], [{ text: 'ok' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'go' })).result.chatId;
    await p.turnDone(chatId);
    const rejected = p.contents(chatId).filter((c) => c.content.type === 'toolCallRejected');
    expect(rejected.map((c) => c.content.id)).toEqual(['d1']);
    // ECA chat.clj (skills removed when their eca__skill approval is deny): the catalog does not offer it.
    expect(systemOf(0)).toContain('<skill name="lint-fix"');
    expect(systemOf(0)).not.toContain('review-pr');
    expect(allText(1)).not.toContain('BODY-MARKER-7731');
    expect(allText(1)).toContain('LINT-BODY');
  });

  // ECA prompt.clj `build-static-instructions` names eca__skill: a request without the tool gets no catalog.
  it('with the skill tool disabled, the catalog is not in the system prompt', async () => {
    const { p } = await boot({ '.agents/skills/review-pr/SKILL.md': REVIEW }, { disabledTools: ['skill'] });
    llm().script([{ text: 'ok' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'go' })).result.chatId;
    await p.turnDone(chatId);
    expect((llm().requests[0].body.tools ?? []).map((t: any) => t.function.name)).not.toContain('patchbay__skill');
    expect(systemOf(0)).not.toContain('<skills');
    expect(systemOf(0)).not.toContain('patchbay__skill');
  });
});

// ECA config.clj: the built-in explorer subagent allows eca__skill; chat.clj builds every chat's
// catalog from the skills its approval does not deny (a subagent's own rules included).
describe('skills in subagent child chats', () => {
  it('a child chat gets the catalog and loads a skill; a subagent whose tools deny the skill tool gets no catalog', async () => {
    const nosk = '---\ndescription: Works without skills\nmode: subagent\ntools:\n  deny: [skill]\n---\nYou work alone.\n';
    const { p } = await boot({ '.agents/skills/review-pr/SKILL.md': REVIEW, '.patchbay/agents/nosk.md': nosk });
    const spawn = (id: string, agent: string) => ({ toolCall: { id, name: 'patchbay__spawn_agent', args: { agent, task: `task for ${agent}` } } });
    llm().script(
      [spawn('s1', 'explorer')],
      [{ toolCall: { id: 'k1', name: 'patchbay__skill', args: { name: 'review-pr' } } }],
      [{ text: 'child done' }],
      [spawn('s2', 'nosk')],
      [{ text: 'no skills here' }],
      [{ text: 'all done' }],
    );
    const chatId = (await p.request(ECA.chatPrompt, { message: 'go' })).result.chatId;
    await p.turnDone(chatId);
    expect(p.text(chatId)).toContain('all done');
    const toolNames = (n: number): string[] => (llm().requests[n].body.tools ?? []).map((t: any) => t.function.name);
    // The explorer's requests: the catalog and the tool, then the body after it asked.
    expect(systemOf(1)).toContain('<skill name="review-pr"');
    expect(toolNames(1)).toContain('patchbay__skill');
    expect(allText(1)).not.toContain('BODY-MARKER-7731');
    expect(allText(2)).toContain('BODY-MARKER-7731');
    // The agent that denies the tool: neither the tool nor a catalog naming it.
    expect(systemOf(4)).toContain('You work alone.');
    expect(toolNames(4)).not.toContain('patchbay__skill');
    expect(systemOf(4)).not.toContain('<skills');
    // The parent still has both.
    expect(systemOf(5)).toContain('<skill name="review-pr"');
  });
});

describe('custom commands and skill commands over ECA (commands.clj)', () => {
  // ECA commands.clj `all-commands` (types, description fallback, arguments) and `handle-command!` / `substitute-args`.
  it('lists them as ECA types them and runs /weather with named args and /review-pr with $ARGS', async () => {
    const { p, root } = await boot({ '.agents/skills/review-pr/SKILL.md': REVIEW, '.eca/commands/weather.md': WEATHER, '.patchbay/commands/plain.md': 'Check $1 please\n' });
    const cmds = (await p.request(ECA.chatQueryCommands, { query: '' })).result.commands as any[];
    expect(cmds.find((c) => c.name === 'weather')).toEqual({
      name: 'weather',
      description: 'Generate a weather report',
      type: 'custom-prompt',
      arguments: [
        { name: 'city', description: 'City to report on', required: true },
        { name: 'units', description: 'metric or imperial', required: false },
      ],
    });
    // No front-matter: the description is the file's path (ECA `custom-command-description-fallback`).
    expect(cmds.find((c) => c.name === 'plain')).toEqual({ name: 'plain', description: `${root}/.patchbay/commands/plain.md`, type: 'custom-prompt', arguments: [{ name: 'arg1', required: true }] });
    expect(cmds.find((c) => c.name === 'review-pr')).toEqual({ name: 'review-pr', description: 'Review a pull request given its URL', type: 'skill', arguments: [{ name: 'arg1', required: true }] });

    llm().script([{ text: 'sunny' }], [{ text: 'looks fine' }], [{ text: 'loading' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: '/weather Paris metric' })).result.chatId;
    await p.turnDone(chatId);
    expect(lastUser(0)).toBe('Write a weather report for Paris using metric units.');
    // The chat shows what the user typed.
    expect(p.text(chatId, 'user')).toContain('/weather Paris metric');

    await p.request(ECA.chatPrompt, { chatId, message: '/review-pr https://example.com/pull/9' });
    await p.turnDone(chatId, 2);
    expect(lastUser(1)).toBe('Review the following pull request: https://example.com/pull/9\nBODY-MARKER-7731: check the tests.');

    await p.request(ECA.chatPrompt, { chatId, message: '/review-pr' });
    await p.turnDone(chatId, 3);
    expect(lastUser(2)).toBe('Load skill: review-pr');
  });

  // patchbay's own check (ECA sends the body with the placeholder left empty); the argument list is ECA's.
  it('a missing required argument is said in the chat and nothing is sent', async () => {
    const { p } = await boot({ '.eca/commands/weather.md': WEATHER });
    const chatId = (await p.request(ECA.chatPrompt, { message: '/weather' })).result.chatId;
    await p.turnDone(chatId);
    expect(p.text(chatId, 'system')).toContain('/weather needs the argument "city". Usage: /weather <city> [units]');
    expect(llm().requests).toHaveLength(0);
  });

  // ECA commands.clj `all-commands` reads the command folders at each chat/queryCommands.
  it('a file added while the server runs is listed at the next query', async () => {
    const { p, root } = await boot({});
    expect(((await p.request(ECA.chatQueryCommands, { query: 'ship' })).result.commands as any[]).map((c) => c.name)).toEqual([]);
    const { mkdirSync, writeFileSync } = await import('node:fs');
    mkdirSync(`${root}/.eca/commands`, { recursive: true });
    writeFileSync(`${root}/.eca/commands/ship.md`, '---\ndescription: Ship it\n---\nShip $ARGS');
    expect(((await p.request(ECA.chatQueryCommands, { query: 'ship' })).result.commands as any[]).map((c) => [c.name, c.type])).toEqual([['ship', 'custom-prompt']]);
  });
});

describe('an untrusted workspace (issue 16)', () => {
  // patchbay's trust rule (config/held-back.ts), over ECA's skills.clj `config-skills` (absolute paths read as given).
  it('loads its own skill files, but its config may not point the skills key outside the folder', async () => {
    const outside = workspace({ 'far-away/SKILL.md': '---\nname: far-away\ndescription: Reads your other files\n---\nFAR\n' });
    const { p } = await boot({
      '.agents/skills/review-pr/SKILL.md': REVIEW,
      '.patchbay/config.json': JSON.stringify({ skills: [{ path: outside }] }),
    });
    const held = await p.waitFor((m) => m.method === '$/showMessage' && String(m.params.message).includes('skills.0'), 'the held-back warning');
    expect(held.params.message).toContain(`skills.0 (reads skills from ${outside})`);
    const names = ((await p.request(ECA.chatQueryCommands, { query: '' })).result.commands as any[]).map((c) => c.name);
    expect(names).toContain('review-pr');
    expect(names).not.toContain('far-away');
    llm().script([{ text: 'ok' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'hi' })).result.chatId;
    await p.turnDone(chatId);
    expect(systemOf(0)).toContain('<skill name="review-pr"');
    expect(systemOf(0)).not.toContain('far-away');
  });
});

describe('bad skill and command files', () => {
  // ECA skills.clj `skill-file->skill` drops a SKILL.md without name/description; commands.clj drops a file mixing placeholders.
  it('are told in the chat once and listed by /doctor; the good ones still work', async () => {
    const { p } = await boot({
      '.agents/skills/review-pr/SKILL.md': REVIEW,
      '.agents/skills/no-meta/SKILL.md': '# Just a heading\n',
      '.agents/skills/misnamed/SKILL.md': '---\nname: other-name\ndescription: x\n---\nbody\n',
      '.eca/commands/broken.md': '---\ndescription: [unclosed\n---\nbody\n',
      '.eca/commands/mixed.md': '{{city}} and $1\n',
      '.eca/commands/weather.md': WEATHER,
    });
    llm().script([{ text: 'one' }], [{ text: 'two' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'hello' })).result.chatId;
    await p.turnDone(chatId);
    const told = p.text(chatId, 'system');
    expect(told).toContain('Skill skipped: .agents/skills/no-meta/SKILL.md: no front-matter');
    expect(told).toContain('Skill skipped: .agents/skills/misnamed/SKILL.md: the name "other-name" does not match its folder "misnamed"');
    expect(told).toMatch(/Custom command skipped: \.eca\/commands\/broken\.md: YAML: /);
    expect(told).toContain('Custom command skipped: .eca/commands/mixed.md: it mixes positional ($1/$ARGS) and named ({{name}}) arguments');
    // The good skill is still offered, the good command still runs.
    expect(systemOf(0)).toContain('<skill name="review-pr"');
    expect(systemOf(0)).not.toContain('other-name');
    const names = ((await p.request(ECA.chatQueryCommands, { query: '' })).result.commands as any[]).map((c) => c.name);
    expect(names).toEqual(expect.arrayContaining(['weather', 'review-pr']));
    expect(names).not.toContain('broken');
    expect(names).not.toContain('mixed');

    // Told once: the next prompt repeats none of it.
    const before = p.contents(chatId).length;
    await p.request(ECA.chatPrompt, { chatId, message: '/weather Oslo' });
    await p.turnDone(chatId, 2);
    expect(lastUser(1)).toBe('Write a weather report for Oslo using  units.');
    const later = p
      .contents(chatId)
      .slice(before)
      .filter((c) => c.role === 'system' && c.content.type === 'text')
      .map((c) => c.content.text)
      .join('\n');
    expect(later).not.toContain('skipped');

    await p.request(ECA.chatPrompt, { chatId, message: '/doctor' });
    await p.turnDone(chatId, 3);
    const doctor = p.text(chatId, 'system');
    expect(doctor).toContain('Skills (1): review-pr (project: .agents/skills/review-pr/SKILL.md)');
    expect(doctor).toContain('Custom commands (1): /weather (project: .eca/commands/weather.md)');
    expect(doctor).toContain('Problem: Skill skipped: .agents/skills/no-meta/SKILL.md');
    expect(doctor).toContain('Problem: Custom command skipped: .eca/commands/mixed.md');
  });
});
