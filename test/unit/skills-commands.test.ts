/**
 * Skills and custom commands from files: parsing and validation (agentskills spec, ECA's
 * shared.clj `extract-args-from-content`), placeholder rendering (commands.clj `substitute-args`),
 * precedence, the mtime cache, the skill tool, approvals per skill name, and what an untrusted
 * workspace config may not point at.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { holdBack } from '../../src/config/held-back.js';
import { loadConfig } from '../../src/config/load.js';
import { configSchema } from '../../src/config/schema.js';
import { decideApproval } from '../../src/core/tool-calls/approval.js';
import { CommandRegistry, type Command } from '../../src/core/chat/commands.js';
import { parseCustomCommand } from '../../src/core/agent-files/custom-commands.js';
import { placeholders, renderPlaceholders } from '../../src/core/agent-files/prompt-args.js';
import { PromptSources } from '../../src/core/turn/prompt-sections.js';
import { RuntimeBoard } from '../../src/core/agent-files/runtime-board.js';
import { parseSkill } from '../../src/core/agent-files/skills.js';
import { ToolRegistry } from '../../src/core/tool-calls/tool-registry.js';
import { CustomCommands } from '../../src/runtime/custom-commands.js';
import { SkillCatalog } from '../../src/runtime/skills.js';
import { MdFileCache } from '../../src/runtime/md-file-cache.js';
import { fileTrust, recordTrust, type FileTrust } from '../../src/config/trust.js';
import { coveredFilesNow } from '../../src/config/trusted-files.js';

let tmp: string;
let home: string;
let ws: string;

beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'patchbay-skills-'));
  home = join(tmp, 'home');
  ws = join(tmp, 'ws');
  mkdirSync(home, { recursive: true });
  mkdirSync(ws, { recursive: true });
});
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

function write(path: string, text: string): string {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
}

const skillText = (name: string, description: string, body = `Do ${name}.`) => `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}\n`;

function host(config: Record<string, unknown> = {}, pureConfig = false, trusted = false) {
  const h = {
    fileTrust: (): FileTrust => (trusted ? 'trusted' : 'untrusted'),
    roots: () => [ws],
    config: () => configSchema.parse(config),
    pureConfig: () => pureConfig,
    env: { HOME: home },
    homeDir: home,
    board: new RuntimeBoard(),
    tools: new ToolRegistry(),
    commands: new CommandRegistry(),
    prompt: new PromptSources(),
  };
  return h;
}

const scope = { chatId: 'c', agent: 'code' as const, roots: [] as string[], stored: [] };
const ctx = { chatId: 'c', signal: new AbortController().signal } as Parameters<Command['run']>[1];

describe('SKILL.md parsing (agentskills spec)', () => {
  const file = '/x/skills/lint-fix/SKILL.md';
  it('reads name, description and body; optional spec keys are accepted', () => {
    const r = parseSkill('---\nname: lint-fix\ndescription: Lint and fix\nlicense: MIT\nallowed-tools: Bash(git:*)\nmetadata:\n  author: me\n---\n\n# Steps\nRun it.\n', file);
    expect(r).toMatchObject({ ok: true, skill: { name: 'lint-fix', description: 'Lint and fix', body: '# Steps\nRun it.', dir: '/x/skills/lint-fix', arguments: [] } });
  });
  it('refuses a file without front-matter, without name or description, or with a bad or mismatched name', () => {
    expect(parseSkill('# Just text', file)).toEqual({ ok: false, error: expect.stringMatching(/no front-matter/) });
    expect(parseSkill('---\ndescription: d\n---\nx', file)).toEqual({ ok: false, error: expect.stringMatching(/no "name"/) });
    expect(parseSkill('---\nname: lint-fix\n---\nx', file)).toEqual({ ok: false, error: expect.stringMatching(/no "description"/) });
    expect(parseSkill('---\nname: Lint_Fix\ndescription: d\n---\nx', '/x/Lint_Fix/SKILL.md')).toEqual({ ok: false, error: expect.stringMatching(/lowercase/) });
    expect(parseSkill('---\nname: other\ndescription: d\n---\nx', file)).toEqual({ ok: false, error: 'the name "other" does not match its folder "lint-fix"' });
    expect(parseSkill(`---\nname: lint-fix\ndescription: ${'d'.repeat(1025)}\n---\nx`, file)).toEqual({ ok: false, error: expect.stringMatching(/1025 characters/) });
    expect(parseSkill('---\nname: [broken\n---\nx', file)).toEqual({ ok: false, error: expect.stringMatching(/^YAML/) });
  });
  it('keeps a skill whose body mixes $1 and {{name}} (a CI skill quoting shell and workflow syntax), with no arguments', async () => {
    const r = parseSkill(skillText('lint-fix', 'd', 'In the step: echo $1 and ${{ github.sha }}'), file);
    expect(r).toMatchObject({ ok: true, skill: { name: 'lint-fix', arguments: [], literal: true } });
    write(join(ws, '.agents/skills/ci-fix/SKILL.md'), skillText('ci-fix', 'Fix CI', 'echo $1 then ${{ github.sha }}'));
    const h = host();
    new SkillCatalog(h).install();
    expect(h.board.problems()).toEqual([]);
    expect(await h.commands.find('ci-fix')!.run(['the', 'build'], ctx)).toEqual({ kind: 'prompt', userText: 'Load skill: ci-fix\n\nthe build' });
  });
  it('finds the body placeholders for /name args', () => {
    const r = parseSkill(skillText('lint-fix', 'd', 'Review $ARGS then $2'), file);
    expect(r.ok && r.skill.arguments).toEqual([
      { name: 'arg1', required: true },
      { name: 'arg2', required: true },
    ]);
  });
});

describe('placeholders (ECA shared.clj / commands.clj)', () => {
  it('declares positional arguments up to the highest number, one for $ARGS alone, named ones in first-appearance order', () => {
    expect(placeholders('Check $1 and $ARG3')).toEqual({ ok: true, named: false, arguments: ['arg1', 'arg2', 'arg3'].map((name) => ({ name, required: true })) });
    expect(placeholders('All: $ARGUMENTS')).toEqual({ ok: true, named: false, arguments: [{ name: 'arg1', required: true }] });
    expect(placeholders('{{ city }} in {{units|upper}} for {{city}}')).toEqual({
      ok: true,
      named: true,
      arguments: [
        { name: 'city', required: true },
        { name: 'units', required: true },
      ],
    });
    expect(placeholders('nothing here')).toEqual({ ok: true, named: false, arguments: [] });
  });
  it('refuses mixing the two kinds', () => {
    expect(placeholders('{{city}} and $1')).toEqual({ ok: false, error: expect.stringMatching(/mixes positional/) });
  });
  it('renders positional arguments in one pass, $10 as the tenth, unknown numbers left as written', () => {
    expect(renderPlaceholders('a=$1 b=$ARG2 all=$ARGS rest=$ARGUMENTS none=$3', ['x', '$1'], false)).toBe('a=x b=$1 all=x $1 rest=x $1 none=$3');
    const ten = Array.from({ length: 10 }, (_, i) => `v${i + 1}`);
    expect(renderPlaceholders('$10|$1', ten, false)).toBe('v10|v1');
  });
  it('renders named arguments in order of first appearance; one not given renders empty', () => {
    expect(renderPlaceholders('Weather for {{city}} in {{ units }} ({{city|upper}})', ['Paris'], true)).toBe('Weather for Paris in  (Paris)');
  });
});

describe('custom command files', () => {
  it('takes the file name as the command, front-matter description and arguments (named: by name)', () => {
    const r = parseCustomCommand(
      '---\ndescription: Generate a weather report\narguments:\n  - name: units\n    description: metric or imperial\n    required: false\n  - name: city\n    description: City\n---\nWeather for {{city}} in {{units}}.\n',
      '/w/.eca/commands/Weather.md',
    );
    expect(r).toEqual({
      ok: true,
      command: {
        name: 'weather',
        description: 'Generate a weather report',
        body: 'Weather for {{city}} in {{units}}.',
        file: '/w/.eca/commands/Weather.md',
        named: true,
        arguments: [
          { name: 'city', description: 'City', required: true },
          { name: 'units', description: 'metric or imperial', required: false },
        ],
      },
    });
  });
  it('falls back to the file path as description; front-matter names positional arguments by position', () => {
    const r = parseCustomCommand('---\narguments:\n  - name: file\n---\nCheck $1 for $2', '/w/c/perf.md');
    expect(r.ok && [r.command.description, r.command.arguments]).toEqual([
      '/w/c/perf.md',
      [
        { name: 'file', required: true },
        { name: 'arg2', required: true },
      ],
    ]);
  });
  it('refuses broken YAML and mixed placeholders', () => {
    expect(parseCustomCommand('---\ndescription: [x\n---\nbody', '/c/x.md')).toMatchObject({ ok: false, error: expect.stringMatching(/^YAML/) });
    expect(parseCustomCommand('{{a}} $1', '/c/x.md')).toMatchObject({ ok: false, error: expect.stringMatching(/mixes/) });
  });
});

describe('custom commands in the workspace', () => {
  // ECA commands.clj `custom-commands` (config, global, local) and `get-custom-command` (the first of a name).
  it('lists them as custom-prompt commands, user over project; runs with named args; says which argument is missing', async () => {
    write(join(ws, '.eca/commands/weather.md'), '---\ndescription: Weather\narguments:\n  - name: units\n    required: false\n---\nWeather for {{city}} in {{units}}.');
    write(join(home, '.config/eca/commands/hello.md'), 'Hello $ARGS');
    write(join(ws, '.patchbay/commands/hello.md'), 'PROJECT-HELLO $ARGS');
    write(join(ws, '.patchbay/commands/bad.md'), '{{a}} and $1');
    const h = host();
    new CustomCommands(h).install();
    const listed = h.commands.query('');
    expect(listed.map((c) => [c.name, c.type])).toEqual([
      ['hello', 'custom-prompt'],
      ['weather', 'custom-prompt'],
    ]);
    // A repository's file of the same name does not replace the user's own command.
    expect(await h.commands.find('hello')!.run(['you'], ctx)).toEqual({ kind: 'prompt', userText: 'Hello you' });
    const weather = h.commands.find('weather')!;
    expect(await weather.run(['Paris', 'metric'], ctx)).toEqual({ kind: 'prompt', userText: 'Weather for Paris in metric.' });
    expect(await weather.run(['Paris'], ctx)).toEqual({ kind: 'prompt', userText: 'Weather for Paris in .' });
    expect(await weather.run([], ctx)).toEqual({ kind: 'show', text: '/weather needs the argument "city". Usage: /weather <city> [units]' });
    expect(h.board.problems()).toEqual(['Custom command skipped: .patchbay/commands/bad.md: it mixes positional ($1/$ARGS) and named ({{name}}) arguments']);
    expect(h.board.summary()).toEqual([
      'Custom commands (2): /hello (user: ~/.config/eca/commands/hello.md), /weather (project: .eca/commands/weather.md)',
      'Custom commands: /hello: ~/.config/eca/commands/hello.md (user) wins over .patchbay/commands/hello.md (project)',
    ]);
  });

  it('takes up edits, new files and the commands config key without a restart', () => {
    const h = host({ commands: [{ path: 'more' }] });
    new CustomCommands(h).install();
    expect(h.commands.query('')).toEqual([]);
    const f = write(join(ws, 'more/deep/ship.md'), '---\ndescription: Ship it\n---\nShip');
    expect(h.commands.query('').map((c) => [c.name, c.description])).toEqual([['ship', 'Ship it']]);
    writeFileSync(f, '---\ndescription: Ship it now\n---\nShip');
    // A same-size rewrite within the clock's granularity is still seen: bump the mtime.
    utimesSync(f, new Date(), new Date(Date.now() + 5000));
    expect(h.commands.query('').map((c) => c.description)).toEqual(['Ship it now']);
  });
});

describe('skills in the workspace', () => {
  // ECA skills.clj `all` (config, global, …, local) and tools/skill.clj (the first of a name).
  it("puts only names and descriptions in a stable prompt section; the user's skill wins a clash; bad files are reported", async () => {
    write(join(ws, '.agents/skills/review-pr/SKILL.md'), skillText('review-pr', 'Review a pull request', 'Review the PR: $ARGS\nSECRET-BODY'));
    write(join(ws, '.eca/skills/lint-fix/SKILL.md'), skillText('lint-fix', 'Project version'));
    write(join(home, '.agents/skills/lint-fix/SKILL.md'), skillText('lint-fix', 'Lint & fix "code"'));
    write(join(ws, '.eca/skills/broken/SKILL.md'), '# no front-matter');
    write(join(ws, '.eca/skills/wrong/SKILL.md'), skillText('right', 'x'));
    const h = host();
    const catalog = new SkillCatalog(h).install();
    const sections = h.prompt.sections(scope);
    expect(sections).toHaveLength(1);
    expect(sections[0]).toMatchObject({ id: 'skills', stable: true });
    expect(sections[0].text).toContain('<skill name="lint-fix" description="Lint &amp; fix &quot;code&quot;"/>');
    expect(sections[0].text).toContain('<skill name="review-pr" description="Review a pull request"/>');
    expect(sections[0].text).toContain('patchbay__skill');
    expect(sections[0].text).not.toContain('SECRET-BODY');
    expect(sections[0].text).not.toContain('Project version');
    expect(catalog.skills().map((s) => s.name)).toEqual(['lint-fix', 'review-pr']);
    expect(h.board.problems()).toEqual([
      'Skill skipped: .eca/skills/broken/SKILL.md: no front-matter (a SKILL.md starts with "---", then name and description)',
      'Skill skipped: .eca/skills/wrong/SKILL.md: the name "right" does not match its folder "wrong"',
    ]);
    expect(h.board.summary()).toEqual([
      'Skills (2): lint-fix (user: ~/.agents/skills/lint-fix/SKILL.md), review-pr (project: .agents/skills/review-pr/SKILL.md)',
      'Skills: skill "lint-fix": ~/.agents/skills/lint-fix/SKILL.md (user) wins over .eca/skills/lint-fix/SKILL.md (project)',
    ]);
    // Commands of type skill: with arguments the body is rendered; without, the model is asked to load it.
    const cmds = h.commands.query('');
    expect(cmds.map((c) => [c.name, c.type, c.arguments])).toEqual([
      ['skills', 'native', []],
      ['lint-fix', 'skill', []],
      ['review-pr', 'skill', [{ name: 'arg1', required: true }]],
    ]);
    expect(await h.commands.find('review-pr')!.run(['https://x/pull/1'], ctx)).toEqual({ kind: 'prompt', userText: 'Review the PR: https://x/pull/1\nSECRET-BODY' });
    expect(await h.commands.find('lint-fix')!.run([], ctx)).toEqual({ kind: 'prompt', userText: 'Load skill: lint-fix' });
    // `/skills` lists them as ECA's native command does.
    expect(await h.commands.find('skills')!.run([], ctx)).toEqual({ kind: 'show', text: 'Skills available:\n\n- lint-fix: Lint & fix "code"\n- review-pr: Review a pull request' });
  });

  // ECA commands.clj `handle-command!`: native names are matched before custom commands and skills.
  it('/skills stays the native list when a custom command file is also named skills', async () => {
    write(join(ws, '.agents/skills/review-pr/SKILL.md'), skillText('review-pr', 'Review'));
    write(join(ws, '.eca/commands/skills.md'), 'IMPOSTOR');
    const h = host();
    new CustomCommands(h).install();
    new SkillCatalog(h).install();
    expect(await h.commands.find('skills')!.run([], ctx)).toEqual({ kind: 'show', text: 'Skills available:\n\n- review-pr: Review' });
    expect(h.commands.query('skills')[0]).toMatchObject({ name: 'skills', type: 'native' });
  });

  it('with pureConfig reads no user folder (as ECA), but project folders and config paths', () => {
    write(join(home, '.config/eca/skills/user-one/SKILL.md'), skillText('user-one', 'u'));
    write(join(ws, '.eca/skills/proj-one/SKILL.md'), skillText('proj-one', 'p'));
    write(join(tmp, 'extra/cfg-one/SKILL.md'), skillText('cfg-one', 'c'));
    write(join(home, '.config/eca/commands/user-cmd.md'), 'x');
    const h = host({ skills: [{ path: join(tmp, 'extra') }] }, true);
    new CustomCommands(h).install();
    expect(
      new SkillCatalog(h)
        .install()
        .skills()
        .map((s) => s.name),
    ).toEqual(['cfg-one', 'proj-one']);
    expect(h.commands.find('user-cmd')).toBeUndefined();
  });

  it('offers the skill tool only while there are skills; it returns the body, the folder and its other files', async () => {
    const h = host();
    new SkillCatalog(h).install();
    h.prompt.sections(scope);
    expect(h.tools.all().map((t) => t.name)).toEqual([]);
    const dir = join(ws, '.patchbay/skills/gif-maker');
    write(join(dir, 'SKILL.md'), skillText('gif-maker', 'Make gifs', 'Use scripts/make.py'));
    write(join(dir, 'scripts/make.py'), 'print(1)');
    write(join(dir, 'references/guide.md'), '# guide');
    h.prompt.sections(scope);
    const tool = h.tools.all().find((t) => t.name === 'skill')!;
    expect(tool).toMatchObject({ server: 'patchbay', readOnly: true });
    const toolCtx = { signal: new AbortController().signal, roots: [ws], chatId: 'c' } as Parameters<typeof tool.call>[1];
    const r = await tool.call({ name: 'gif-maker' }, toolCtx);
    expect(r.error).toBe(false);
    expect(r.outputs[0]).toEqual({
      type: 'text',
      text: [
        '**Skill**: gif-maker',
        `**Base directory**: ${dir}`,
        '',
        '**Files in the skill folder** (relative to the base directory):',
        '- references/guide.md',
        '- scripts/make.py',
        '',
        'Use scripts/make.py',
      ].join('\n'),
    });
    const missing = await tool.call({ name: 'nope' }, toolCtx);
    expect(missing).toEqual({ error: true, outputs: [{ type: 'text', text: "Skill 'nope' not found, available skills: gif-maker" }] });
    // A name is only ever looked up, never joined to a path.
    const climbing = await tool.call({ name: '../gif-maker' }, toolCtx);
    expect(climbing.error).toBe(true);
    expect(JSON.stringify(climbing.outputs)).not.toContain('Use scripts/make.py');
  });

  // A skill with a vendored tree: the listing must not walk all of it at every load.
  it('the skill tool lists at most 100 files and reads at most 200 folders, and says there is more', async () => {
    const h = host();
    new SkillCatalog(h).install();
    const dir = join(ws, '.patchbay/skills/big');
    write(join(dir, 'SKILL.md'), skillText('big', 'Big', 'BIG-BODY'));
    for (let i = 0; i < 150; i++) writeFileSync(join(dir, `f${String(i).padStart(3, '0')}.txt`), '');
    for (let i = 0; i < 250; i++) mkdirSync(join(dir, `zz/d${String(i).padStart(3, '0')}`), { recursive: true });
    write(join(dir, 'zz/d249/deep.txt'), 'x');
    h.prompt.sections(scope);
    const tool = h.tools.all().find((t) => t.name === 'skill')!;
    const toolCtx = { signal: new AbortController().signal, roots: [ws], chatId: 'c' } as Parameters<typeof tool.call>[1];
    const text = ((await tool.call({ name: 'big' }, toolCtx)).outputs[0] as { text: string }).text;
    expect(text.split('\n').filter((l) => l.startsWith('- f'))).toHaveLength(100);
    expect(text).toContain('- … and more (not all are listed)');
    expect(text).toContain('BIG-BODY');

    // Only folders: the file past the folder cap is not reached, and the listing says so.
    rmSync(dir, { recursive: true });
    write(join(dir, 'SKILL.md'), skillText('big', 'Big', 'BIG-BODY'));
    for (let i = 0; i < 250; i++) mkdirSync(join(dir, `d${String(i).padStart(3, '0')}`), { recursive: true });
    write(join(dir, 'd249/deep.txt'), 'x');
    h.prompt.sections(scope);
    const folders = ((await tool.call({ name: 'big' }, toolCtx)).outputs[0] as { text: string }).text;
    expect(folders).not.toContain('deep.txt');
    expect(folders).toContain('**Files in the skill folder**: too many folders to list');
  });

  it('reads skills from the skills config key (a folder of skills or one skill folder)', () => {
    write(join(tmp, 'shared/a-one/SKILL.md'), skillText('a-one', 'first'));
    write(join(tmp, 'single/b-two/SKILL.md'), skillText('b-two', 'second'));
    // The config's entry comes first in ECA's `all`, so it wins a name the user's folder also has.
    write(join(home, '.config/patchbay/skills/a-one/SKILL.md'), skillText('a-one', 'user copy'));
    const h = host({ skills: [{ path: join(tmp, 'shared') }, { path: join(tmp, 'single/b-two') }, { path: 'missing' }] });
    const catalog = new SkillCatalog(h).install();
    expect(catalog.skills().map((s) => [s.name, s.description])).toEqual([
      ['a-one', 'first'],
      ['b-two', 'second'],
    ]);
    expect(h.board.problems()).toEqual(['Skills: missing: not found']);
  });
});

describe('config and folder changes', () => {
  it('a new skills config entry and a workspace folder added at run time apply at the next read', () => {
    write(join(tmp, 'extra/cfg-one/SKILL.md'), skillText('cfg-one', 'c'));
    const ws2 = join(tmp, 'ws2');
    write(join(ws2, '.eca/skills/second/SKILL.md'), skillText('second', 's'));
    write(join(ws2, '.eca/commands/two.md'), 'two');
    let config: Record<string, unknown> = {};
    let roots = [ws];
    const h = { ...host(), roots: () => roots, config: () => configSchema.parse(config) };
    const catalog = new SkillCatalog(h).install();
    new CustomCommands(h).install();
    expect(catalog.skills()).toEqual([]);
    config = { skills: [{ path: join(tmp, 'extra') }] };
    expect(catalog.skills().map((s) => s.name)).toEqual(['cfg-one']);
    roots = [ws, ws2];
    expect(catalog.skills().map((s) => s.name)).toEqual(['cfg-one', 'second']);
    expect(h.commands.find('two')?.type).toBe('custom-prompt');
    roots = [ws];
    expect(catalog.skills().map((s) => s.name)).toEqual(['cfg-one']);
    expect(h.commands.find('two')).toBeUndefined();
  });
});

describe('skill approvals per name (ECA docs/config/skills.md)', () => {
  const skill = { name: 'skill', server: 'patchbay', readOnly: true };
  it('runs without asking by default; argsMatchers on "name" deny or allow single skills', () => {
    expect(decideApproval(skill, { name: 'x' }, {})).toBe('allow');
    const deny = { deny: { eca__skill: { argsMatchers: { name: ['secret-.*'] } } } };
    expect(decideApproval(skill, { name: 'secret-ops' }, deny)).toBe('deny');
    expect(decideApproval(skill, { name: 'lint-fix' }, deny)).toBe('allow');
    const onlyOne = { byDefault: 'ask' as const, deny: {}, allow: { patchbay__skill: { argsMatchers: { name: ['my-skill'] } } } };
    expect(decideApproval({ ...skill, readOnly: false }, { name: 'my-skill' }, onlyOne)).toBe('allow');
    expect(decideApproval({ ...skill, readOnly: false }, { name: 'other' }, onlyOne)).toBe('ask');
  });
});

describe('untrusted workspace config: skills and commands paths', () => {
  it('files that link outside an untrusted workspace folder are skipped and said; in a trusted one they load', () => {
    const secret = write(join(tmp, 'private/id_key.md'), 'PRIVATE KEY');
    write(join(tmp, 'shared/linked-skill/SKILL.md'), skillText('linked-skill', 'shared'));
    mkdirSync(join(ws, '.eca/commands'), { recursive: true });
    mkdirSync(join(ws, '.agents/skills'), { recursive: true });
    symlinkSync(secret, join(ws, '.eca/commands/leak.md'));
    symlinkSync(join(tmp, 'shared/linked-skill'), join(ws, '.agents/skills/linked-skill'));
    write(join(ws, '.eca/commands/own.md'), 'mine');
    const untrusted = host();
    new CustomCommands(untrusted).install();
    const skills = new SkillCatalog(untrusted).install();
    expect(untrusted.commands.find('leak')).toBeUndefined();
    expect(untrusted.commands.find('own')?.type).toBe('custom-prompt');
    expect(skills.skills()).toEqual([]);
    expect(untrusted.board.problems()).toEqual([
      'Custom command skipped: .eca/commands/leak.md: it links outside its workspace folder, which you have not trusted (/trust loads it)',
      'Skill skipped: .agents/skills/linked-skill/SKILL.md: it links outside its workspace folder, which you have not trusted (/trust loads it)',
    ]);
    const trusted = host({}, false, true);
    new CustomCommands(trusted).install();
    expect(trusted.commands.find('leak')?.type).toBe('custom-prompt');
    expect(
      new SkillCatalog(trusted)
        .install()
        .skills()
        .map((s) => s.name),
    ).toEqual(['linked-skill']);
    expect(trusted.board.problems()).toEqual([]);
  });

  it('trust covers each linked file as it was: a link retargeted or added after trust is skipped and said, until trusted again (issue 31)', async () => {
    const store = join(tmp, 'pbhome');
    write(join(tmp, 'shared/team/SKILL.md'), skillText('team', 'shared'));
    write(join(tmp, 'shared/notes.md'), 'team notes');
    const secret = write(join(tmp, 'private/id_key.md'), 'PRIVATE KEY');
    mkdirSync(join(ws, '.patchbay/skills'), { recursive: true });
    mkdirSync(join(ws, '.patchbay/commands'), { recursive: true });
    symlinkSync(join(tmp, 'shared/team'), join(ws, '.patchbay/skills/team'));
    symlinkSync(join(tmp, 'shared/notes.md'), join(ws, '.patchbay/commands/notes.md'));
    const real = () => ({ ...host(), fileTrust: (root: string, path: string, bytes: Buffer) => fileTrust(store, root, path, bytes) });
    const covered = () => coveredFilesNow(ws, { env: { HOME: home }, homeDir: home });
    recordTrust(store, ws, 'x', await covered());
    const before = real();
    new CustomCommands(before).install();
    expect(
      new SkillCatalog(before)
        .install()
        .skills()
        .map((s) => s.name),
    ).toEqual(['team']);
    expect(before.commands.find('notes')?.type).toBe('custom-prompt');
    expect(before.board.problems()).toEqual([]);

    // A pull: the command now links to a key, and a new skill links out.
    rmSync(join(ws, '.patchbay/commands/notes.md'));
    symlinkSync(secret, join(ws, '.patchbay/commands/notes.md'));
    write(join(tmp, 'shared/other/SKILL.md'), skillText('other', 'shared'));
    symlinkSync(join(tmp, 'shared/other'), join(ws, '.patchbay/skills/other'));
    const after = real();
    new CustomCommands(after).install();
    expect(
      new SkillCatalog(after)
        .install()
        .skills()
        .map((s) => s.name),
    ).toEqual(['team']);
    expect(after.commands.find('notes')).toBeUndefined();
    expect(after.board.problems()).toEqual([
      `Custom command skipped: .patchbay/commands/notes.md: it links outside its workspace folder and is new or changed since you trusted ${ws} (/trust loads it)`,
      `Skill skipped: .patchbay/skills/other/SKILL.md: it links outside its workspace folder and is new or changed since you trusted ${ws} (/trust loads it)`,
    ]);

    recordTrust(store, ws, 'x', await covered());
    expect(after.commands.find('notes')?.type).toBe('custom-prompt');
    expect(after.board.problems()).toEqual([]);
  });

  it('a trust record without files (an older patchbay) covers no linked file: skipped, and told to trust again', async () => {
    const store = join(tmp, 'pbhome');
    write(join(tmp, 'shared/notes.md'), 'team notes');
    mkdirSync(join(ws, '.patchbay/commands'), { recursive: true });
    symlinkSync(join(tmp, 'shared/notes.md'), join(ws, '.patchbay/commands/notes.md'));
    mkdirSync(store, { recursive: true });
    writeFileSync(join(store, 'trust.json'), JSON.stringify({ version: 1, folders: { [ws]: { sha256: 'x', trustedAt: '2026-01-01T00:00:00.000Z' } } }));
    const h = { ...host(), fileTrust: (root: string, path: string, bytes: Buffer) => fileTrust(store, root, path, bytes) };
    new CustomCommands(h).install();
    expect(h.commands.find('notes')).toBeUndefined();
    expect(h.board.problems()[0]).toContain('not covered by the trust of');
  });

  it('holds back entries leading outside the workspace and keeps the ones inside', () => {
    const layer = { skills: [{ path: 'team-skills' }, { path: '../elsewhere' }, { path: '~/x' }, { path: '/etc' }], commands: [{ path: join(ws, 'cmds') }] };
    const { kept, held } = holdBack(layer, {}, ws);
    expect(held.map((h) => h.key)).toEqual(['skills.1', 'skills.2', 'skills.3']);
    expect(held[0].detail).toBe('reads skills from ../elsewhere');
    expect(kept.skills).toEqual([{ path: 'team-skills' }]);
    expect(kept.commands).toEqual([{ path: join(ws, 'cmds') }]);
  });
  it('loadConfig applies them from an untrusted folder only inside it; the user config may point anywhere', () => {
    write(join(ws, '.patchbay/config.json'), JSON.stringify({ skills: [{ path: 'mine' }, { path: join(tmp, 'outside') }] }));
    write(join(home, '.config/patchbay/config.json'), JSON.stringify({ commands: [{ path: join(tmp, 'outside') }] }));
    const r = loadConfig({ roots: [ws], env: { HOME: home }, homeDir: home });
    expect(r.config.skills).toEqual([{ path: 'mine' }]);
    expect(r.config.commands).toEqual([{ path: join(tmp, 'outside') }]);
    expect(r.workspaces[0].settings.map((s) => s.key)).toEqual(['skills.1']);
    // Keys patchbay now implements: no "ECA setting patchbay does not implement" warning.
    expect(r.errors).toEqual([]);
  });
});

describe('the command registry', () => {
  it('a live source that throws loses its own commands only', async () => {
    const reg = new CommandRegistry();
    reg.set('native', [{ name: 'doctor', description: 'd', type: 'native', arguments: [], run: async () => ({ kind: 'show', text: 'ok' }) }]);
    reg.live('custom', () => {
      throw new Error('EACCES');
    });
    expect(reg.query('').map((c) => c.name)).toEqual(['doctor']);
    expect(await reg.find('doctor')!.run([], ctx)).toEqual({ kind: 'show', text: 'ok' });
  });
});

describe('the folder walk (md-file-cache.ts) at every prompt', () => {
  // A repository can hold links to folders above them; the walk is synchronous, so a tree that grows
  // as (links)^depth would freeze the server at its first prompt.
  it('walks each real folder once, so links back up the tree cannot blow the walk up', () => {
    write(join(ws, '.agents/skills/review-pr/SKILL.md'), skillText('review-pr', 'Review'));
    const loops = join(ws, '.agents/skills/loops');
    mkdirSync(loops, { recursive: true });
    for (let i = 0; i < 8; i++) symlinkSync('..', join(loops, `up${i}`));
    const h = host();
    const catalog = new SkillCatalog(h).install();
    expect(catalog.skills().map((s) => s.name)).toEqual(['review-pr']);
    expect(h.board.problems()).toEqual([]);
    // Found once, not again under every looped name (`loops/up0/review-pr/…` would "lose" to it).
    expect(h.board.summary()).toEqual(['Skills (1): review-pr (project: .agents/skills/review-pr/SKILL.md)']);
  });

  it('stops after the folder cap and says so; the skills found before it still load', () => {
    write(join(ws, '.agents/skills/a-skill/SKILL.md'), skillText('a-skill', 'A'));
    for (let i = 0; i < 10; i++) mkdirSync(join(ws, `.agents/skills/z${i}`), { recursive: true });
    const cache = new MdFileCache((text, path) => parseSkill(text, path));
    const source = { path: join(ws, '.agents/skills'), scope: 'project' as const, root: ws, origin: '.agents/skills' };
    const scan = cache.scan([source], { match: (n) => n === 'SKILL.md', leaf: true, maxDirs: 5 });
    expect(scan.files.map((f) => f.value.ok && f.value.skill.name)).toEqual(['a-skill']);
    expect(scan.problems).toEqual([{ path: source.path, message: 'more than 5 folders; the rest were not read' }]);
  });

  it('says so when there are more files than it reads', () => {
    for (const n of ['a', 'b', 'c']) write(join(ws, `.eca/commands/${n}.md`), n);
    const cache = new MdFileCache((text) => text);
    const source = { path: join(ws, '.eca/commands'), scope: 'project' as const, root: ws, origin: '.eca/commands' };
    const scan = cache.scan([source], { match: (n) => n.endsWith('.md'), limit: 2 });
    expect(scan.files.map((f) => f.value)).toEqual(['a', 'b']);
    expect(scan.problems).toEqual([{ path: source.path, message: 'more than 2 files; the rest were not read' }]);
  });
});
