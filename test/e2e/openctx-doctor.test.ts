/** `patchbay doctor` asks every OpenCtx provider's meta; a provider without meta.name still answers to autoInclude. */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EcaProc, fakeProviderConfig, refusedPort, runPatchbay, tempDir, useFakeLlmSuite, workspace, type CliRun } from './harness.js';

const { llm, track } = useFakeLlmSuite();
const fixture = (f: string) => resolve(import.meta.dirname, '../fixtures/openctx', f);

/** `patchbay <args>` in `cwd` with its own home (and no PATCHBAY_CONFIG). */
function run(args: string[], cwd: string, home: string): Promise<CliRun> {
  return runPatchbay(args, { home, cwd, env: { PATCHBAY_CONFIG: undefined }, stdin: null, timeoutMs: 0, until: 'close' });
}

/** `patchbay doctor` in a workspace the user trusts (its config names OpenCtx providers). */
async function doctor(cwd: string): Promise<CliRun> {
  const home = tempDir();
  const trusted = await run(['trust', '--yes', cwd], cwd, home);
  expect(trusted.code, trusted.stderr).toBe(0);
  return run(['doctor'], cwd, home);
}

describe('OpenCtx providers in patchbay doctor', () => {
  it('shows the error of a missing module and of a refused URL, and ok with the capabilities of working ones', async () => {
    const port = await refusedPort();
    const url = `http://127.0.0.1:${port}/ctx`;
    const config = {
      openctx: {
        providers: { './tools/missing-provider.mjs': true, [`${url}?token=sekrit-123`]: true, [fixture('notes-provider.mjs')]: true, [fixture('nameless-provider.mjs')]: true },
        timeoutMs: 3000,
      },
    };
    const root = workspace({ '.patchbay/config.json': JSON.stringify(config) });
    const { stdout } = await doctor(root);
    const lines = stdout.split('\n');
    const line = (start: string) => lines.find((l) => l.startsWith(`  - ${start}`)) ?? `(no line for ${start} in:\n${stdout})`;
    expect(line('./tools/missing-provider.mjs')).toContain(`failing — cannot load provider module ${join(root, 'tools', 'missing-provider.mjs')}`);
    // Shown as `…/ctx?…`: that a query was there, never what it said.
    expect(line(url)).toMatch(new RegExp(`failing — meta: cannot reach ${`${url}?…`.replace(/[.?]/g, '\\$&')}: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}`));
    // The query string may carry a token: it is never shown.
    expect(stdout).not.toContain('sekrit-123');
    expect(line('notes')).toBe(`  - notes (${fixture('notes-provider.mjs')}): ok — mentions, annotations`);
    expect(line('nameless-provider')).toBe(`  - nameless-provider (${fixture('nameless-provider.mjs')}): ok — items; meta has no name, so it is called "nameless-provider"`);
  });
});

describe('an OpenCtx provider whose meta has no name', () => {
  it('answers to autoInclude by the name derived from its file, with a warning; an entry naming nothing is reported', async () => {
    const home = tempDir();
    const openctx = { providers: { [fixture('nameless-provider.mjs')]: true }, autoInclude: ['nameless-provider', 'no-such-provider'] };
    const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url, 'openai-chat', { openctx }) }));
    await p.initialize(workspace());
    await p.waitFor((m) => m.method === 'config/updated');
    llm().script([{ text: 'ok' }]);
    const chatId = (await p.request('chat/prompt', { message: 'hello nameless' })).result.chatId;
    await p.turnDone(chatId);
    const user = llm()
      .requests[0].body.messages.filter((m: any) => m.role === 'user')
      .at(-1).content as string;
    expect(user).toContain('nameless saw: hello nameless');
    expect(p.stderr).toContain(`meta has no "name"; calling it "nameless-provider"`);
    expect(p.stderr).toMatch(/autoInclude "no-such-provider" names no provider \(their names: "nameless-provider"/);
  });
});

describe('OpenCtx modules named in the user config, in a folder not trusted', () => {
  it('do not resolve from the folder (a clone cannot plant the package the user config names); trusted, they do', async () => {
    const home = tempDir();
    const root = workspace({ 'a.txt': 'x\n' });
    const ran = join(root, 'ran');
    const pkg = join(root, 'node_modules', 'team-notes-provider');
    mkdirSync(pkg, { recursive: true });
    writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'team-notes-provider', main: 'index.js' }));
    writeFileSync(join(pkg, 'index.js'), `require('fs').writeFileSync(${JSON.stringify(ran)}, 'ran');\nmodule.exports = { meta: () => ({ name: 'planted' }) };\n`);
    // The user's own config (always trusted) names the package; the folder ships one by that name.
    const env = { PATCHBAY_CONFIG: JSON.stringify({ openctx: { providers: { 'team-notes-provider': true, './my-provider.mjs': true } } }) };
    const doctor = () => runPatchbay(['doctor'], { home, cwd: root, env, stdin: null, timeoutMs: 0, until: 'close' });
    const before = await doctor();
    expect(before.stdout).toMatch(/team-notes-provider.*failing/);
    // Relative paths resolve from the user's config folder, not the workspace.
    expect(before.stdout).toContain(join(home, '.config', 'patchbay', 'my-provider.mjs'));
    expect(existsSync(ran)).toBe(false);
    expect((await run(['trust', '--yes', root], root, home)).code).toBe(0);
    const after = await doctor();
    expect(after.stdout).toMatch(/planted \(team-notes-provider\): ok/);
    expect(existsSync(ran)).toBe(true);
  });
});
