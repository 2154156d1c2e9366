// Where project instructions and rules are read from, in which order, and when they are read again
// (src/runtime/instructions.ts), on real files in temp folders.
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configSchema, type Config } from '../../src/config/schema.js';
import type { PromptScope } from '../../src/core/turn/prompt-sections.js';
import { RuntimeBoard } from '../../src/core/agent-files/runtime-board.js';
import type { StoredMessage } from '../../src/core/chat/stored-message.js';
import { ProjectInstructions } from '../../src/runtime/instructions.js';
import { textResult, type Tool, type ToolContext } from '../../src/shapes/tool.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function temp(): string {
  const d = mkdtempSync(join(tmpdir(), 'pb-instr-'));
  dirs.push(d);
  return d;
}

function write(base: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(base, rel, '..'), { recursive: true });
    writeFileSync(join(base, rel), text);
  }
}

function make(opts: { roots: string[]; home: string; config?: Partial<Config>; trusted?: boolean; stored?: StoredMessage[]; maxWalkEntries?: number }) {
  const board = new RuntimeBoard();
  const config = { ...configSchema.parse({}), ...opts.config } as Config;
  const pi = new ProjectInstructions({
    roots: () => opts.roots,
    config: () => config,
    env: { XDG_CONFIG_HOME: join(opts.home, '.config') },
    homeDir: opts.home,
    trusted: () => opts.trusted ?? false,
    board,
    stored: () => opts.stored ?? [],
    ...(opts.maxWalkEntries ? { maxWalkEntries: opts.maxWalkEntries } : {}),
  });
  const scope = (extra: Partial<PromptScope> = {}): PromptScope => ({ chatId: 'c1', agent: 'code', model: 'fake/m1', roots: opts.roots, stored: opts.stored ?? [], ...extra });
  return { pi, board, scope };
}

const files = (pi: ProjectInstructions): string[] => pi.current().files.map((f) => f.path);

describe('project instructions files', () => {
  it('user file first, then the git root down to the workspace folder, with CLAUDE.md and copilot-instructions fallbacks', () => {
    const home = temp();
    const repo = temp();
    write(home, { '.config/patchbay/AGENTS.md': 'mine', '.config/eca/AGENTS.md': 'eca one' });
    write(repo, {
      '.git/HEAD': 'ref: refs/heads/main\n',
      '.github/copilot-instructions.md': 'copilot at the git root',
      'a/CLAUDE.md': 'claude in a',
      'a/.github/copilot-instructions.md': 'not read: a is neither the git root nor the workspace folder',
      'a/b/AGENTS.md': 'agents in b',
      'a/b/CLAUDE.md': 'not read: b has AGENTS.md',
    });
    const root = join(repo, 'a', 'b');
    const { pi } = make({ roots: [root], home });
    expect(files(pi)).toEqual([join(home, '.config/patchbay/AGENTS.md'), join(repo, '.github/copilot-instructions.md'), join(repo, 'a/CLAUDE.md'), join(root, 'AGENTS.md')]);
    expect(pi.current().files.map((f) => f.kind)).toEqual(['user', 'parent', 'parent', 'workspace']);
    expect(pi.current().files[3].text).toBe(`<agents-file description="Primary System Directives &amp; Coding Standards." path="${join(root, 'AGENTS.md')}">\nagents in b\n</agents-file>`);
  });

  it("falls back to ~/.config/eca/AGENTS.md; without a git root only the workspace folder's own file is read", () => {
    const home = temp();
    const outer = temp();
    write(home, { '.config/eca/AGENTS.md': 'eca one' });
    write(outer, { 'AGENTS.md': 'outside any repository: not read', 'ws/AGENTS.md': 'ws' });
    const { pi } = make({ roots: [join(outer, 'ws')], home });
    expect(files(pi)).toEqual([join(home, '.config/eca/AGENTS.md'), join(outer, 'ws/AGENTS.md')]);
  });

  it("ECA's includeParentAgentsFiles: false reads only the workspace folder's file, true every parent's", () => {
    const home = temp();
    const outer = temp();
    write(outer, { '.git/HEAD': 'x', 'AGENTS.md': 'outer', 'ws/AGENTS.md': 'ws' });
    const root = join(outer, 'ws');
    expect(files(make({ roots: [root], home, config: { includeParentAgentsFiles: false } }).pi)).toEqual([join(root, 'AGENTS.md')]);
    const noGit = temp();
    write(noGit, { 'AGENTS.md': 'outer', 'ws/AGENTS.md': 'ws' });
    const all = files(make({ roots: [join(noGit, 'ws')], home, config: { includeParentAgentsFiles: true } }).pi);
    expect(all.slice(-2)).toEqual([join(noGit, 'AGENTS.md'), join(noGit, 'ws/AGENTS.md')]);
  });

  it('cuts a file at 64 KB and says so, in the prompt and as a problem', () => {
    const home = temp();
    const root = temp();
    write(root, { 'AGENTS.md': 'x'.repeat(70 * 1024) });
    const { pi, board } = make({ roots: [root], home });
    const text = pi.current().files[0].text;
    expect(text).toContain('[cut: only the first 64 KB of this file is included]');
    expect(text.length).toBeLessThan(66 * 1024);
    expect(board.problems()).toEqual([`rules: ${join(root, 'AGENTS.md')} is 70 KB; only its first 64 KB is in the prompt`]);
  });

  it('an untrusted folder does not follow a link out of it; a trusted one does', () => {
    const home = temp();
    const root = temp();
    write(home, { secret: 'SECRET' });
    mkdirSync(join(root, '.patchbay', 'rules'), { recursive: true });
    symlinkSync(join(home, 'secret'), join(root, 'AGENTS.md'));
    symlinkSync(join(home, 'secret'), join(root, '.patchbay', 'rules', 'leak.md'));
    const untrusted = make({ roots: [root], home });
    expect(untrusted.pi.current().files).toEqual([]);
    expect(untrusted.pi.current().rules).toEqual([]);
    expect(untrusted.board.problems()).toHaveLength(2);
    expect(untrusted.board.problems()[0]).toMatch(/links outside .*a folder you have not trusted; not read/);
    const trusted = make({ roots: [root], home, trusted: true });
    expect(trusted.pi.current().files).toHaveLength(1);
    expect(trusted.pi.current().rules.map((r) => r.body)).toEqual(['SECRET']);
  });

  it("an untrusted folder's rules folder linking out of it is not walked, nor its linked subfolders", () => {
    const home = temp();
    const root = temp();
    write(home, { 'tree/a/one.md': 'ONE', 'tree/b/c/two.md': 'TWO', 'other/three.md': 'THREE' });
    mkdirSync(join(root, '.eca'), { recursive: true });
    symlinkSync(join(home, 'tree'), join(root, '.eca', 'rules'));
    mkdirSync(join(root, '.patchbay', 'rules'), { recursive: true });
    write(root, { '.patchbay/rules/own.md': 'OWN' });
    symlinkSync(join(home, 'other'), join(root, '.patchbay', 'rules', 'linked'));
    const { pi, board } = make({ roots: [root], home });
    expect(pi.current().rules.map((r) => r.body)).toEqual(['OWN']);
    // One problem per folder refused, none per file inside it: they were never listed.
    expect(board.problems().sort()).toEqual([
      `rules: ${join(root, '.eca', 'rules')}: links outside ${root}, a folder you have not trusted; not read`,
      `rules: ${join(root, '.patchbay', 'rules', 'linked')}: links outside ${root}, a folder you have not trusted; not read`,
    ]);
  });

  it('a rules folder with more entries than the walk takes is read up to the limit and says so', () => {
    const home = temp();
    const root = temp();
    const dir = join(root, '.patchbay', 'rules', 'many');
    mkdirSync(dir, { recursive: true });
    for (let i = 0; i < 60; i++) writeFileSync(join(dir, `r${String(i).padStart(2, '0')}.md`), `rule ${i}`);
    const { pi, board } = make({ roots: [root], home, trusted: true, maxWalkEntries: 50 });
    // The folder `many` is one entry, so 49 of its files are read.
    expect(pi.current().rules).toHaveLength(49);
    expect(board.problems()).toEqual([`rules: ${join(root, '.patchbay', 'rules')}: more than 50 entries; the rest is not read`]);
  });
});

describe('rules files', () => {
  it('reads user, project and config rules; a missing config path and a bad file are problems, the rest applies', () => {
    const home = temp();
    const root = temp();
    write(home, { '.config/eca/rules/global.md': 'GLOBAL', 'extra/one.md': 'EXTRA' });
    write(root, {
      '.patchbay/rules/a.md': 'A',
      '.eca/rules/nested/b.md': '---\nagent: plan\n---\nB',
      '.patchbay/rules/.hidden.md': 'hidden files are skipped',
      '.patchbay/rules/bad.md': '---\nmodel: "("\n---\nBAD',
      '.patchbay/rules/empty.md': '---\nagent: code\n---\n\n',
    });
    const { pi, board, scope } = make({ roots: [root], home, config: { rules: [{ path: '~/extra' }, { path: 'missing-rules' }] } });
    const rules = pi.current().rules;
    expect(rules.map((r) => [r.body, r.scope])).toEqual([
      ['GLOBAL', 'global'],
      ['A', 'project'],
      ['B', 'project'],
      ['EXTRA', 'global'],
    ]);
    expect(board.problems()).toEqual([
      `rules: ${join(root, '.patchbay/rules/bad.md')}: bad "model" regex "(": Invalid regular expression: /(/: Unterminated group; the rule is skipped`,
      `rules: config "rules": missing-rules: ${join(root, 'missing-rules')} not found`,
    ]);
    const [rulesSection] = pi.sections(scope());
    expect(rulesSection).toMatchObject({ id: 'rules', stable: true });
    expect(rulesSection.text).toContain('<global-rules description="Global user rules; project rules are more specific.">\n<rule name="global.md">GLOBAL</rule>');
    expect(rulesSection.text).not.toContain('>B<');
    expect(pi.sections(scope({ agent: 'plan' }))[0].text).toContain('<rule name="b.md">B</rule>');
  });

  it('reads again only what changed: an edited AGENTS.md and a new rule file show at the next request', () => {
    const home = temp();
    const root = temp();
    write(root, { 'AGENTS.md': 'first', '.patchbay/rules/a.md': 'A' });
    const { pi, scope } = make({ roots: [root], home });
    const snap = pi.current();
    expect(pi.current()).toBe(snap);
    write(root, { 'AGENTS.md': 'second, longer', '.patchbay/rules/sub/b.md': 'B' });
    const texts = pi
      .sections(scope())
      .map((s) => s.text)
      .join('\n');
    expect(texts).toContain('second, longer');
    expect(texts).toContain('<rule name="b.md">B</rule>');
  });

  it('a path-scoped rule is a catalog entry (stable) and, with a matching file in play, a dynamic body', () => {
    const home = temp();
    const root = temp();
    write(root, { '.patchbay/rules/ts.md': '---\npaths: "src/**.ts"\nenforce: read\n---\nTS BODY' });
    const stored: StoredMessage[] = [{ role: 'user', text: 'x', contextText: `<file path="${join(root, 'src/deep/a.ts')}">\n…\n</file>` }];
    const { pi, scope } = make({ roots: [root], home });
    const before = pi.sections(scope());
    expect(before.map((s) => [s.id, s.stable, s.text.includes('TS BODY')])).toEqual([
      ['rules', true, false],
      ['rules:in-play', false, false],
    ]);
    expect(before[0].text).toContain(`<rule id="${join(root, '.patchbay/rules/ts.md')}" name="ts.md" scope="project" workspace-root="${root}" paths="src/**.ts" enforce="read"/>`);
    const after = pi.sections(scope({ stored }));
    expect(after[1]).toMatchObject({ id: 'rules:in-play', stable: false });
    expect(after[1].text).toContain('TS BODY');
  });

  it('disabling fetch_rule makes path-scoped rules inactive, as in ECA', () => {
    const home = temp();
    const root = temp();
    write(root, { '.patchbay/rules/ts.md': '---\npaths: "src/**.ts"\n---\nTS BODY' });
    const { pi, scope } = make({ roots: [root], home, config: { disabledTools: ['fetch_rule'] } });
    expect(
      pi
        .sections(scope())
        .map((s) => s.text)
        .join(''),
    ).toBe('');
  });
});

describe('enforce (ECA path_rules.clj)', () => {
  const called: string[] = [];
  const fakeTool = (name: string): Tool => ({
    name,
    server: 'patchbay',
    origin: 'native',
    description: '',
    inputSchema: {},
    readOnly: name === 'read_file',
    mutates: name !== 'read_file',
    call: async (args) => {
      called.push(`${name} ${String(args.path)}`);
      return textResult('done');
    },
  });
  const ctx = (roots: string[]): ToolContext => ({ signal: new AbortController().signal, roots, chatId: 'c1', editor: {} });

  it('enforce: read blocks read_file of a matching file until the rule is fetched; modify-only rules do not block reads', async () => {
    const home = temp();
    const root = temp();
    write(root, {
      '.patchbay/rules/data.md': '---\npaths: "data/**"\nenforce: read\n---\nNO PII',
      '.patchbay/rules/edit.md': '---\npaths: "src/**"\n---\nEDIT RULE',
    });
    const stored: StoredMessage[] = [];
    const { pi } = make({ roots: [root], home, stored });
    const read = pi.wrapTool(fakeTool('read_file'));
    const writeTool = pi.wrapTool(fakeTool('write_file'));
    const target = join(root, 'data/users.csv');
    const refused = await read.call({ path: target }, ctx([root]));
    expect(refused.error).toBe(true);
    expect(refused.outputs[0]).toMatchObject({ type: 'text' });
    expect((refused.outputs[0] as { text: string }).text).toContain(`Path-scoped rules must be fetched before reading '${target}'`);
    expect(called).toEqual([]);
    // Reading a file only a modify rule matches goes through; writing it does not.
    expect((await read.call({ path: join(root, 'src/a.ts') }, ctx([root]))).error).toBe(false);
    expect((await writeTool.call({ path: join(root, 'src/b.ts') }, ctx([root]))).error).toBe(true);
    stored.push({
      role: 'tool',
      toolCallId: 'f',
      name: 'fetch_rule',
      server: 'patchbay',
      origin: 'native',
      args: { id: join(root, '.patchbay/rules/data.md'), path: target },
      outcome: 'called',
      error: false,
      outputs: [],
      llmText: '',
      totalTimeMs: 1,
    });
    expect((await read.call({ path: target }, ctx([root]))).error).toBe(false);
    expect(called).toEqual([`read_file ${join(root, 'src/a.ts')}`, `read_file ${target}`]);
    // Other tools are left as they are.
    const grep = fakeTool('grep');
    expect(pi.wrapTool(grep)).toBe(grep);
  });
});
