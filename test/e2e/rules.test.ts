/**
 * Project instructions (AGENTS.md) and rules, over the built binary's real stdio with the fake LLM
 * recording what the model is sent. Follows ECA src/eca/features/context.clj
 * `agents-file-contexts` (AGENTS.md of the workspace, its parents and the user's config dir, in
 * `<agents-file>` tags), src/eca/features/rules.clj (`all-rules`: agent/model filters, static vs
 * path-scoped), prompt.clj `build-static-instructions` (`## Rules`, the path-scoped catalog),
 * tools/fetch_rule.clj `fetch-rule` (id + absolute path, validated; header then body),
 * tools/path_rules.clj `require-fetched-path-scoped-rules` (enforce) and commands.clj `rules-msg`
 * (`/rules`).
 */
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ECA } from '../../src/protocol/eca/methods.js';
import { EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, useTempDirs, type Msg } from './harness.js';

const scratch = useTempDirs();
const { llm, track } = useFakeLlmSuite();

function write(base: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(base, rel, '..'), { recursive: true });
    writeFileSync(join(base, rel), text);
  }
}

/** A git repository holding the workspace folder `pkg`, with instructions and rules files. */
function setup(extra: Record<string, string> = {}): { home: string; repo: string; root: string } {
  const home = scratch(tempDir('pb-home-'));
  const repo = scratch(tempDir('pb-repo-'));
  const root = join(repo, 'pkg');
  mkdirSync(join(repo, '.git'), { recursive: true });
  write(home, { '.config/patchbay/AGENTS.md': 'USER-AGENTS: answer in English.' });
  write(repo, {
    'AGENTS.md': 'PARENT-AGENTS: this is a monorepo.',
    'pkg/AGENTS.md': 'WORKSPACE-AGENTS: use pnpm.',
    'pkg/.patchbay/rules/static.md': 'STATIC-RULE: prefer small functions.',
    'pkg/.patchbay/rules/ts.md': '---\npaths: "src/**.ts"\n---\nTS-RULE: no default exports.',
    'pkg/.patchbay/rules/plan-only.md': '---\nagent: plan\n---\nPLAN-RULE: list the risks.',
    'pkg/.patchbay/rules/broken.md': '---\npaths: "src/[a.ts"\n---\nBROKEN-RULE',
    'pkg/src/a.ts': 'export const a = 1;\n',
    'pkg/src/deep/b.ts': 'export const b = 2;\n',
    ...extra,
  });
  return { home, repo, root };
}

async function boot(s: { home: string; root: string }, config: Record<string, unknown> = {}): Promise<EcaProc> {
  const p = track(new EcaProc({ home: s.home, config: fakeProviderConfig(llm().url, 'openai-chat', config) }));
  await p.initialize(s.root);
  return p;
}

const system = (n: number): string => llm().requests[n].body.messages[0].content;
const toolMessage = (n: number): string => llm().requests[n].body.messages.find((m: any) => m.role === 'tool').content;
const systemTexts = (p: EcaProc, chatId: string): string[] =>
  p
    .contents(chatId)
    .filter((c) => c.role === 'system' && c.content.type === 'text')
    .map((c) => c.content.text);

async function prompt(p: EcaProc, params: Record<string, unknown>, nth = 1): Promise<string> {
  const chatId: string = (await p.request(ECA.chatPrompt, params)).result.chatId;
  await p.turnDone(chatId, nth);
  return chatId;
}

describe('project instructions and rules', () => {
  it('AGENTS.md files (user, parent, workspace) and static rules reach the system prompt; path-scoped ones only as a catalog', async () => {
    const s = setup();
    const p = await boot(s);
    llm().script([{ text: 'ok' }]);
    const chatId = await prompt(p, { message: 'hi' });
    const sys = system(0);
    const user = sys.indexOf('USER-AGENTS');
    const parent = sys.indexOf('PARENT-AGENTS');
    const ws = sys.indexOf('WORKSPACE-AGENTS');
    // Documented order: the user's file, then outermost parent down to the workspace folder.
    expect(user).toBeGreaterThan(-1);
    expect(parent).toBeGreaterThan(user);
    expect(ws).toBeGreaterThan(parent);
    expect(sys).toContain(`path="${join(s.repo, 'AGENTS.md')}"`);
    expect(sys).toContain('STATIC-RULE: prefer small functions.');
    // The catalog names the path-scoped rule; its body stays out until it applies.
    expect(sys).toContain(`id="${join(s.root, '.patchbay/rules/ts.md')}"`);
    expect(sys).toContain('paths="src/**.ts"');
    expect(sys).not.toContain('TS-RULE');
    // An agent-filtered rule: not for `code`.
    expect(sys).not.toContain('PLAN-RULE');
    // The bad file is skipped and told in the chat, once.
    expect(sys).not.toContain('BROKEN-RULE');
    expect(systemTexts(p, chatId).filter((t) => t.includes('broken.md') && t.includes('bad "paths" glob'))).toHaveLength(1);
    expect(llm().requests[0].body.tools.map((t: any) => t.function.name)).toContain('patchbay__fetch_rule');
  });

  it('files AGENTS.md @-mentions follow it, each once; in an untrusted folder not one outside it', async () => {
    // ECA context.clj `parse-agents-file`: `@path.ext` mentions, from the file's folder or absolute, recursively.
    const s = setup({
      'pkg/docs/style.md': 'MENTIONED-STYLE: two spaces. Back to @../AGENTS.md',
      'pkg/docs/deeper.md': 'MENTIONED-DEEPER',
    });
    write(s.home, { 'outside.md': 'MENTIONED-OUTSIDE-SECRET' });
    write(s.root, { 'AGENTS.md': `WORKSPACE-AGENTS: use pnpm. Read @docs/style.md, @./docs/deeper.md and @${join(s.home, 'outside.md')}; mail dev@example.com.` });
    const p = await boot(s);
    llm().script([{ text: 'ok' }]);
    const chatId = await prompt(p, { message: 'hi' });
    const sys = system(0);
    expect(sys.indexOf('MENTIONED-STYLE')).toBeGreaterThan(sys.indexOf('WORKSPACE-AGENTS'));
    expect(sys.indexOf('MENTIONED-DEEPER')).toBeGreaterThan(sys.indexOf('MENTIONED-STYLE'));
    expect(sys).toContain(`<agents-file description="Primary System Directives &amp; Coding Standards." path="${join(s.root, 'docs/style.md')}">`);
    // The cycle back to AGENTS.md does not repeat it.
    expect(sys.split('WORKSPACE-AGENTS').length).toBe(2);
    expect(sys).not.toContain('MENTIONED-OUTSIDE-SECRET');
    expect(systemTexts(p, chatId).join('\n')).toContain(`${join(s.home, 'outside.md')}: mentioned in ${join(s.root, 'AGENTS.md')}, is outside ${s.repo}`);
  });

  it('a path-scoped rule body reaches the model once a matching file is in play (an @-mentioned file)', async () => {
    const s = setup();
    const p = await boot(s);
    llm().script([{ text: 'one' }], [{ text: 'two' }]);
    const chatId = await prompt(p, { message: 'hello' });
    expect(system(0)).not.toContain('TS-RULE');
    await p.request(ECA.chatPrompt, { chatId, message: 'look at this', contexts: [{ type: 'file', path: join(s.root, 'src/a.ts') }] });
    await p.turnDone(chatId, 2);
    expect(system(1)).toContain('TS-RULE: no default exports.');
    // In the dynamic part, after the stable prefix (the workspace folders line).
    expect(system(1).indexOf('TS-RULE')).toBeGreaterThan(system(1).indexOf('Workspace folders:'));
  });

  it('fetch_rule returns the body for a matching path (ECA ** crossing folders) and refuses one that does not match', async () => {
    const s = setup();
    const p = await boot(s);
    const id = join(s.root, '.patchbay/rules/ts.md');
    llm().script(
      [{ toolCall: { id: 'f1', name: 'patchbay__fetch_rule', args: { id, path: join(s.root, 'README.md') } } }],
      [{ toolCall: { id: 'f2', name: 'patchbay__fetch_rule', args: { id, path: join(s.root, 'src/deep/b.ts') } } }],
      [{ text: 'done' }],
    );
    await prompt(p, { message: 'edit b' });
    expect(toolMessage(1)).toContain(`Rule id '${id}' does not apply to path '${join(s.root, 'README.md')}'`);
    expect(toolMessage(1)).toContain('Checked relative path: README.md');
    const fetched = llm().requests[2].body.messages.filter((m: any) => m.role === 'tool')[1].content;
    expect(fetched).toContain('**Matched pattern**: src/**.ts');
    expect(fetched).toContain('TS-RULE: no default exports.');
    // Fetched: not repeated in the prompt.
    expect(system(2)).not.toContain('TS-RULE');
  });

  it('after the chat is compacted, a rule fetched before must be fetched again, and fetch_rule gives its body again', async () => {
    // ECA shared.clj `compact-side-effect!` drops the chat's `:validated-path-rules`: the model no
    // longer reads the fetched content, so fetch_rule.clj must not answer "already loaded".
    const s = setup();
    const p = await boot(s);
    const id = join(s.root, '.patchbay/rules/ts.md');
    const fetch = (callId: string) => [{ toolCall: { id: callId, name: 'patchbay__fetch_rule', args: { id, path: join(s.root, 'src/a.ts') } } }];
    llm().script(fetch('f1'), fetch('f2'), [{ text: 'read it' }], [{ text: 'Summary: the user asked about a.ts.' }], fetch('f3'), [{ text: 'done' }]);
    const chatId = await prompt(p, { message: 'edit a' });
    const before = llm().requests[2].body.messages.filter((m: any) => m.role === 'tool');
    expect(before[0].content).toContain('TS-RULE: no default exports.');
    // Fetched and still in what the model reads: said so, not sent twice.
    expect(before[1].content).toContain('already loaded in this chat');
    await p.request(ECA.chatPrompt, { chatId, message: '/compact' });
    await p.turnDone(chatId, 2);
    await p.request(ECA.chatPrompt, { chatId, message: 'edit a again' });
    await p.turnDone(chatId, 3);
    const after = toolMessage(5);
    expect(JSON.stringify(llm().requests[5].body.messages)).toContain('Summary: the user asked about a.ts.');
    expect(after).not.toContain('already loaded');
    expect(after).toContain('TS-RULE: no default exports.');
  });

  it('enforce: write_file refuses a matching file until the rule reached the model, then writes it', async () => {
    const s = setup();
    // No language server for the .ts file written: not what this is about, and slow to start.
    const p = await boot(s, { toolCall: { approval: { byDefault: 'allow' } }, languageServers: { 'typescript-language-server': { disabled: true } } });
    const target = join(s.root, 'src/new.ts');
    const write1 = { toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: target, content: 'export const n = 1;\n' } } };
    const write2 = { toolCall: { id: 'w2', name: 'patchbay__write_file', args: { path: target, content: 'export const n = 1;\n' } } };
    llm().script([write1], [write2], [{ text: 'written' }]);
    await prompt(p, { message: 'add new.ts' });
    expect(toolMessage(1)).toContain(`Path-scoped rules must be fetched before modifying '${target}'`);
    expect(toolMessage(1)).toContain('call `patchbay__fetch_rule`');
    // The refused call put the file in play: the next request carries the rule, and the write goes through.
    expect(system(1)).toContain('TS-RULE: no default exports.');
    expect(existsSync(target)).toBe(true);
  });

  it('an agent-filtered rule reaches only that agent', async () => {
    const s = setup();
    const p = await boot(s);
    llm().script([{ text: 'planned' }]);
    await prompt(p, { message: 'plan it', agent: 'plan' });
    expect(system(0)).toContain('PLAN-RULE: list the risks.');
  });

  it("a subagent's child chat gets AGENTS.md and the rules for its own agent name, not the parent's agent's", async () => {
    // ECA tools/agent.clj `spawn-agent` runs the child through chat.clj `prompt` with `:agent` the
    // subagent's name, so context.clj `agents-file-contexts` and rules.clj `all-rules` (filtered
    // by that name) apply to it as to any chat.
    const s = setup({
      'pkg/.patchbay/rules/explorer-only.md': '---\nagent: explorer\n---\nEXPLORER-RULE: cite file paths.',
      'pkg/.patchbay/rules/code-only.md': '---\nagent: code\n---\nCODE-RULE: run the tests.',
      // ECA docs/config/rules.md "Condition variables": rendered per chat with `isSubagent`.
      'pkg/.patchbay/rules/context-aware.md': '{% if isSubagent %}\nSUB-ONLY: return only the result.\n{% else %}\nMAIN-ONLY: mention trade-offs.\n{% endif %}',
      'pkg/.patchbay/rules/only-sub.md': '{% if isSubagent %}ONLY-SUB-RULE{% endif %}',
      'pkg/.patchbay/rules/bad-template.md': '{% if isSubagent %}never closed',
    });
    const p = await boot(s);
    const sysOf = (b: any): string => String(b.messages.find((m: any) => m.role === 'system')?.content ?? '');
    llm().onRequest = (path, body) => {
      if (sysOf(body).includes('You are an explorer subagent')) return [{ text: 'found it' }];
      return body.messages.some((m: any) => m.role === 'tool') ? [{ text: 'done' }] : [{ toolCall: { id: 's1', name: 'patchbay__spawn_agent', args: { agent: 'explorer', task: 'Find the parser' } } }];
    };
    const chatId = await prompt(p, { message: 'where is the parser?' });
    const systems = llm().requests.map((r) => sysOf(r.body));
    const child = systems.find((t) => t.includes('You are an explorer subagent'))!;
    const parent = systems.find((t) => !t.includes('You are an explorer subagent'))!;
    expect(child).toBeDefined();
    expect(child).toContain('WORKSPACE-AGENTS: use pnpm.');
    expect(child).toContain('STATIC-RULE: prefer small functions.');
    expect(child).toContain('EXPLORER-RULE: cite file paths.');
    expect(child).not.toContain('CODE-RULE');
    expect(parent).toContain('CODE-RULE: run the tests.');
    expect(parent).not.toContain('EXPLORER-RULE');
    expect(child).toContain('SUB-ONLY: return only the result.');
    expect(child).not.toContain('MAIN-ONLY');
    expect(child).toContain('ONLY-SUB-RULE');
    expect(parent).toContain('MAIN-ONLY: mention trade-offs.');
    expect(parent).not.toContain('SUB-ONLY');
    expect(parent).not.toContain('{%');
    // A rule that renders to nothing is left out whole (no empty <rule> tag), as ECA skips it.
    expect(parent).not.toContain('name="only-sub.md"');
    // A template that cannot be rendered: the rule is skipped and the user told why.
    expect(parent).not.toContain('never closed');
    expect(systemTexts(p, chatId).join('\n')).toMatch(/bad-template\.md: bad template: "\{% if %\}" without its "\{% endif %\}"/);
  });

  it("a subagent whose tools leave out fetch_rule gets no path-scoped catalog, and toolEnabled_* follows the chat's tools", async () => {
    // ECA prompt.clj `build-static-instructions` (`fetch-rule-available?` on the chat's tools) and
    // `->base-selmer-ctx` (`toolEnabled_<full name>`); agents.md: a subagent's `tools` deny.
    const s = setup({
      'pkg/.patchbay/agents/nofetch.md': '---\ndescription: Looks around\nmode: subagent\ntools:\n  deny:\n    - eca__fetch_rule\n---\nNOFETCH-PROMPT: look around.',
      'pkg/.patchbay/rules/tools.md': '{% if toolEnabled_eca__fetch_rule %}FETCH-AVAILABLE{% else %}NO-FETCH{% endif %}',
    });
    const p = await boot(s);
    const sysOf = (b: any): string => String(b.messages.find((m: any) => m.role === 'system')?.content ?? '');
    llm().onRequest = (path, body) => {
      if (sysOf(body).includes('NOFETCH-PROMPT')) return [{ text: 'looked' }];
      return body.messages.some((m: any) => m.role === 'tool') ? [{ text: 'done' }] : [{ toolCall: { id: 'n1', name: 'patchbay__spawn_agent', args: { agent: 'nofetch', task: 'Look' } } }];
    };
    await prompt(p, { message: 'look around' });
    const child = llm().requests.find((r) => sysOf(r.body).includes('NOFETCH-PROMPT'))!.body;
    const parent = llm().requests.find((r) => !sysOf(r.body).includes('NOFETCH-PROMPT'))!.body;
    expect(child.tools.map((t: any) => t.function.name)).not.toContain('patchbay__fetch_rule');
    expect(sysOf(child)).not.toContain('<path-scoped-rules');
    expect(sysOf(child)).toContain('STATIC-RULE');
    expect(sysOf(child)).toContain('NO-FETCH');
    expect(sysOf(parent)).toContain('<path-scoped-rules');
    expect(sysOf(parent)).toContain('FETCH-AVAILABLE');
  });

  it('/rules lists the instructions files and the rules of this chat; doctor lists them and the bad file', async () => {
    const s = setup();
    const p = await boot(s);
    const chatId = await prompt(p, { message: '/rules' });
    const text = systemTexts(p, chatId).join('\n');
    expect(text).toContain(join(s.home, '.config/patchbay/AGENTS.md'));
    expect(text).toContain(`${join(s.root, 'AGENTS.md')} (workspace)`);
    expect(text).toContain('Static rules (full content is included directly in the system prompt):');
    expect(text).toContain('### static.md (project)');
    expect(text).toContain('Path-scoped rules (only a catalog is included');
    expect(text).toContain('Path filter: src/**.ts');
    expect(text).not.toContain('plan-only.md');
    const doctor = await prompt(p, { message: '/doctor' });
    const report = systemTexts(p, doctor).join('\n');
    expect(report).toMatch(/Rules \(3\): 2 static, 1 path-scoped/);
    expect(report).toMatch(/Problem: rules: .*broken\.md: bad "paths" glob/);
    expect(llm().requests).toHaveLength(0);
  });

  it('an untrusted workspace config may add rules inside the folder, not read files outside it', async () => {
    const s = setup({
      'pkg/.patchbay/config.json': JSON.stringify({ rules: [{ path: '~/secret-rules' }, { path: 'team-rules' }] }),
      'pkg/team-rules/team.md': 'TEAM-RULE: write tests.',
    });
    write(s.home, { 'secret-rules/leak.md': 'SECRET-FROM-HOME' });
    const p = await boot(s);
    const held: Msg = await p.waitFor((m) => m.method === '$/showMessage' && /held back/.test(m.params.message), 'held-back message');
    expect(held.params.message).toContain('rules.0 (reads rules from ~/secret-rules)');
    llm().script([{ text: 'ok' }]);
    await prompt(p, { message: 'hi' });
    expect(system(0)).toContain('TEAM-RULE: write tests.');
    expect(system(0)).not.toContain('SECRET-FROM-HOME');
  });

  it('a rules path an untrusted workspace config names inside the folder is not followed out of it by a symbolic link', async () => {
    // The entry passes held-back (it is inside the folder as written); the link is the repository's.
    const s = setup({ 'pkg/.patchbay/config.json': JSON.stringify({ rules: [{ path: 'linked-rules' }, { path: 'one-rule.md' }] }) });
    write(s.home, { 'private/notes.md': 'LINKED-SECRET-DIR', 'private/key.md': 'LINKED-SECRET-FILE' });
    symlinkSync(join(s.home, 'private'), join(s.root, 'linked-rules'));
    symlinkSync(join(s.home, 'private/key.md'), join(s.root, 'one-rule.md'));
    const p = await boot(s);
    llm().script([{ text: 'ok' }]);
    const chatId = await prompt(p, { message: 'hi' });
    expect(system(0)).toContain('STATIC-RULE');
    expect(system(0)).not.toContain('LINKED-SECRET');
    const told = systemTexts(p, chatId).join('\n');
    expect(told).toContain(`${join(s.root, 'linked-rules')}: links outside ${s.root}`);
    expect(told).toContain(`${join(s.root, 'one-rule.md')}: links outside ${s.root}`);
  });
});
