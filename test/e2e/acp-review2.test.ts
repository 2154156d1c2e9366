/**
 * Defects found by a hostile review of issue 28's ACP points (resume, the session-roots ledger,
 * sessions stored at session/new, the line cap), each through the built `patchbay acp` over stdio.
 */
import { mkdirSync } from 'node:fs';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { methods } from '@agentclientprotocol/sdk';
import { fakeProviderConfig, tempDir, useTempDirs, workspace } from './harness.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { AcpProc, useAcpProcs } from './acp-harness.js';

const scratch = useTempDirs();
const llm = useFakeLlm();
const track = useAcpProcs();

const completions = () => llm().requests.filter((r) => r.path === '/v1/chat/completions');

describe('patchbay acp: hostile review of issue 28', () => {
  it('a cwd or additional directory that contains the home folder (its parent, as /home or /Users) is refused, as home itself is', async () => {
    // home is <base>/home: <base> holds every file the user has, as /home does.
    const base = scratch(tempDir());
    const home = join(base, 'home');
    const project = join(base, 'project');
    mkdirSync(home);
    mkdirSync(project);
    const p = track(new AcpProc({ home, config: fakeProviderConfig(llm().url) }));
    await p.initialize();
    await expect(p.newSession(base)).rejects.toMatchObject({ code: -32602, message: expect.stringContaining(`cwd ${base} contains your home folder`) });
    await expect(p.newSession(`${home}/..`)).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('contains your home folder') });
    await expect(p.agent.request(methods.agent.session.new, { cwd: project, additionalDirectories: [base], mcpServers: [] })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining(`additionalDirectories[0] ${base} contains your home folder`),
    });
    // A project beside the home folder is fine.
    const s = await p.newSession(project);
    llm().script([{ text: 'fine' }]);
    expect((await p.prompt(s, 'hi')).stopReason).toBe('end_turn');
  });

  it('a variant chosen before the first prompt is kept across a restart: load and resume show it, and the prompt sends it', async () => {
    const home = scratch(tempDir());
    const root = scratch(workspace({ 'a.txt': 'a\n' }));
    const config = fakeProviderConfig(llm().url) as { providers: { fake: { models: { m1: Record<string, unknown> } } } };
    config.providers.fake.models.m1.variants = { low: { reasoning_effort: 'low' }, high: { reasoning_effort: 'high' } };
    const first = track(new AcpProc({ home, config }));
    await first.initialize();
    const loaded = await first.newSession(root);
    const resumed = await first.newSession(root);
    for (const sessionId of [loaded, resumed]) await first.agent.request(methods.agent.session.setConfigOption, { sessionId, configId: 'variant', value: 'high' });
    await first.stop();

    const second = track(new AcpProc({ home, config }));
    await second.initialize();
    const l = await second.agent.request(methods.agent.session.load, { sessionId: loaded, cwd: root, mcpServers: [] });
    expect(l.configOptions?.find((o) => o.id === 'variant')).toMatchObject({ currentValue: 'high' });
    const r = await second.agent.request(methods.agent.session.resume, { sessionId: resumed, cwd: root });
    expect(r.configOptions?.find((o) => o.id === 'variant')).toMatchObject({ currentValue: 'high' });
    llm().script([{ text: 'x' }]);
    expect((await second.prompt(loaded, 'hi')).stopReason).toBe('end_turn');
    expect(completions().at(-1)?.body.reasoning_effort).toBe('high');
  });

  it("an answer from the client over the line cap fails the agent's own request at once, and is never taken as an answer to one of the client's requests", async () => {
    const home = scratch(tempDir());
    const root = scratch(workspace({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'big.txt': 'small on disk\n' }));
    const p = track(new AcpProc({ home, config: { ...fakeProviderConfig(llm().url), toolCall: { approval: { byDefault: 'allow' } } } }));
    // The editor's buffer of big.txt is over the 32 MB cap: its fs/read_text_file answer is one line over it.
    p.onRead = (r) => ({ content: r.path.endsWith('big.txt') ? 'x'.repeat(33 * 1024 * 1024) : 'small\n' });
    await p.initialize({ fs: { readTextFile: true } });
    const s = await p.newSession(root);
    // Two reads first: the agent's third request then has the id of the client's session/prompt (both sides count from 0).
    llm().script(
      [{ toolCall: { id: 'r1', name: 'patchbay__read_file', args: { path: join(root, 'a.txt') } } }],
      [{ toolCall: { id: 'r2', name: 'patchbay__read_file', args: { path: join(root, 'b.txt') } } }],
      [{ toolCall: { id: 'r3', name: 'patchbay__read_file', args: { path: join(root, 'big.txt') } } }],
      [{ text: 'done' }],
    );
    expect((await p.prompt(s, 'read them')).stopReason).toBe('end_turn');
    expect(p.reads.map((r) => r.path.split('/').at(-1))).toEqual(['a.txt', 'b.txt', 'big.txt']);
    expect(p.text(s)).toBe('done');
    // The model was told the read failed, and why.
    expect(JSON.stringify(completions().at(-1)?.body.messages.at(-1))).toContain('over the limit');
  }, 60_000);

  it('a load or resume without additionalDirectories drops the list session/list reports (ACP: omitted means none are active), so a client restoring from it does not bring them back', async () => {
    const home = scratch(tempDir());
    const root = scratch(workspace({ 'a.txt': 'a\n' }));
    const extra = scratch(workspace({ 'c.txt': 'c\n' }));
    const p = track(new AcpProc({ home, config: fakeProviderConfig(llm().url) }));
    await p.initialize();
    const listed = async () => (await p.agent.request(methods.agent.session.list, { cwd: root })).sessions.map((x) => x.additionalDirectories ?? []);
    const { sessionId } = await p.agent.request(methods.agent.session.new, { cwd: root, additionalDirectories: [extra], mcpServers: [] });
    expect(await listed()).toEqual([[extra]]);
    await p.agent.request(methods.agent.session.resume, { sessionId, cwd: root });
    expect(await listed()).toEqual([[]]);
    await p.agent.request(methods.agent.session.load, { sessionId, cwd: root, additionalDirectories: [extra], mcpServers: [] });
    expect(await listed()).toEqual([[extra]]);
    await p.agent.request(methods.agent.session.load, { sessionId, cwd: root, mcpServers: [] });
    expect(await listed()).toEqual([[]]);
  });

  it('session/delete of a session whose turn runs in another patchbay process is refused, naming it; that turn ends whole and the session goes on', async () => {
    const home = scratch(tempDir());
    const root = scratch(workspace({ 'a.txt': 'a\n' }));
    const there = track(new AcpProc({ home, config: fakeProviderConfig(llm().url) }));
    await there.initialize();
    const s = await there.newSession(root);
    // Held until the delete has been refused: the turn runs there for as long as this takes, however loaded the machine.
    llm().script([{ text: 'slow ' }, { hold: 'turn' }, { text: 'end' }]);
    const running = there.prompt(s, 'one');
    await there.until(() => there.text(s).includes('slow'), 'the running turn');
    // A second editor on the same store.
    const here = track(new AcpProc({ home, config: fakeProviderConfig(llm().url) }));
    await here.initialize();
    await expect(here.agent.request(methods.agent.session.delete, { sessionId: s })).rejects.toMatchObject({ code: -32600, message: expect.stringContaining('another patchbay process') });
    llm().release('turn');
    expect((await running).stopReason).toBe('end_turn');
    expect(there.text(s)).toBe('slow end');
    llm().script([{ text: 'again' }]);
    expect((await there.prompt(s, 'two')).stopReason).toBe('end_turn');
    // Once no turn runs there, it can be deleted from here.
    expect(await here.agent.request(methods.agent.session.delete, { sessionId: s })).toEqual({});
    expect((await here.agent.request(methods.agent.session.list, {})).sessions).toEqual([]);
  });

  it('a session deleted by another patchbay process: its next prompt here is answered not found (-32002), not an internal error, and the agent goes on', async () => {
    const home = scratch(tempDir());
    const root = scratch(workspace({ 'a.txt': 'a\n' }));
    const there = track(new AcpProc({ home, config: fakeProviderConfig(llm().url) }));
    await there.initialize();
    const s = await there.newSession(root);
    llm().script([{ text: 'first' }]);
    expect((await there.prompt(s, 'one')).stopReason).toBe('end_turn');
    const here = track(new AcpProc({ home, config: fakeProviderConfig(llm().url) }));
    await here.initialize();
    expect(await here.agent.request(methods.agent.session.delete, { sessionId: s })).toEqual({});
    await expect(there.prompt(s, 'two')).rejects.toMatchObject({ code: -32002 });
    // Nothing of it came back to the store, and the agent serves a new session.
    expect((await here.agent.request(methods.agent.session.list, {})).sessions).toEqual([]);
    const t = await there.newSession(root);
    llm().script([{ text: 'fine' }]);
    expect((await there.prompt(t, 'three')).stopReason).toBe('end_turn');
  });

  it('an agent started in the home folder (or /) never makes it a workspace folder: session/list before any session labels no chat with it, and that label loads', async () => {
    const home = scratch(tempDir());
    const root = scratch(workspace({ 'a.txt': 'a\n' }));
    const first = track(new AcpProc({ home, config: fakeProviderConfig(llm().url) }));
    await first.initialize();
    const s = await first.newSession(root);
    await first.stop();
    for (const cwd of [home, '/']) {
      // As a store from before folders were recorded has it: listed under the workspace's first folder (a load records one).
      const db = new Database(join(home, '.patchbay', 'patchbay.db'));
      db.prepare('UPDATE chats SET folder = NULL').run();
      db.close();
      const p = track(new AcpProc({ home, config: fakeProviderConfig(llm().url), cwd }));
      await p.initialize();
      const [listed] = (await p.agent.request(methods.agent.session.list, {})).sessions;
      expect(listed).toMatchObject({ sessionId: s, _meta: { patchbay: { folderRecorded: false } } });
      expect([home, '/']).not.toContain(listed!.cwd);
      // What session/list reports, session/load takes.
      await p.agent.request(methods.agent.session.load, { sessionId: s, cwd: listed!.cwd, mcpServers: [] });
      await p.stop();
    }
  });
});
