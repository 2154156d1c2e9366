/**
 * ACP v1's session lifecycle and update kinds beyond the baseline, through the built `patchbay acp`
 * (schema v1 as bundled in @agentclientprotocol/sdk 2.4): `session/resume` (ResumeSessionRequest:
 * the session live again with no replay), `session/delete` (DeleteSessionRequest), `logout`
 * (LogoutRequest, under `agentCapabilities.auth.logout`), `compaction_update` /
 * `compaction_summary_chunk` (sent only to a client with `clientCapabilities.session.compaction`),
 * `usage_update`, `messageId` on chunks (ContentChunk: every chunk of one message shares it), and
 * a session given by `session/new` and never prompted, loaded after a restart. Every update the
 * agent sends here is checked against the bundled schema (`SessionNotification`).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { methods, type SessionUpdate } from '@agentclientprotocol/sdk';
import { fakeProviderConfig, runPatchbay, tempDir, useTempDirs, workspace } from './harness.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { AcpProc, useAcpProcs } from './acp-harness.js';

const scratch = useTempDirs();
const llm = useFakeLlm();
const track = useAcpProcs();

const SCHEMA = createRequire(import.meta.url).resolve('@agentclientprotocol/sdk/schema/v1/schema.json');
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false, logger: false });
ajv.addSchema(JSON.parse(readFileSync(SCHEMA, 'utf8')) as object, 'acp');
const validNotification = ajv.getSchema('acp#/$defs/SessionNotification')!;

/** Every session/update the agent sent matches ACP's schema. */
function expectSchemaValid(p: AcpProc): void {
  for (const n of p.notifications) expect(validNotification(n), `${JSON.stringify(n)}: ${ajv.errorsText(validNotification.errors)}`).toBe(true);
}

const ofKind = <K extends SessionUpdate['sessionUpdate']>(us: SessionUpdate[], k: K) => us.filter((u): u is Extract<SessionUpdate, { sessionUpdate: K }> => u.sessionUpdate === k);

/** What a replay (or its absence) is made of: the chat's own contents, not the lists every session gets. */
const CONTENT = new Set(['user_message_chunk', 'agent_message_chunk', 'agent_thought_chunk', 'tool_call', 'tool_call_update', 'plan']);

function setup(config: Record<string, unknown> = fakeProviderConfig(llm().url)) {
  const home = scratch(tempDir());
  const root = scratch(workspace({ 'a.txt': 'alpha\n' }));
  return { home, root, start: () => track(new AcpProc({ home, config })) };
}

/** The text of every message the fake model was sent in request `i`. */
function sentText(i: number): string {
  return JSON.stringify(llm().requests.filter((r) => r.path === '/v1/chat/completions')[i]?.body.messages ?? []);
}

describe('patchbay acp: resume, delete, logout', () => {
  it('advertises resume, delete (beside list and close) and logout', async () => {
    const { start } = setup();
    const init = await start().initialize();
    expect(init.agentCapabilities?.sessionCapabilities).toMatchObject({ list: {}, close: {}, resume: {}, delete: {} });
    expect(init.agentCapabilities?.auth).toMatchObject({ logout: {} });
  });

  it('session/resume after a restart sends no replay; the next prompt continues the stored chat with its mode', async () => {
    const { root, start } = setup();
    const first = start();
    await first.initialize();
    const sessionId = await first.newSession(root);
    llm().script([{ text: 'the first answer' }]);
    expect((await first.prompt(sessionId, 'the first question')).stopReason).toBe('end_turn');
    await first.agent.request(methods.agent.session.setMode, { sessionId, modeId: 'plan' });
    await first.stop();

    const second = start();
    await second.initialize();
    const r = await second.agent.request(methods.agent.session.resume, { sessionId, cwd: root, mcpServers: [] });
    expect(r.modes?.currentModeId).toBe('plan');
    // Nothing of the conversation comes back (session/load would replay it).
    expect(second.updates(sessionId).filter((u) => CONTENT.has(u.sessionUpdate))).toEqual([]);
    llm().script([{ text: 'the second answer' }]);
    expect((await second.prompt(sessionId, 'the second question')).stopReason).toBe('end_turn');
    expect(second.text(sessionId)).toBe('the second answer');
    const sent = sentText(1);
    expect(sent).toContain('the first question');
    expect(sent).toContain('the first answer');
    expect(sent).toContain('the second question');
    expectSchemaValid(second);
    // An id this agent never gave is not found.
    await expect(second.agent.request(methods.agent.session.resume, { sessionId: 'nope', cwd: root })).rejects.toMatchObject({ code: -32002 });
  });

  it('session/delete stops its turn and removes it: gone from session/list, and load and resume fail, after a restart too', async () => {
    const { root, start } = setup();
    const p = start();
    await p.initialize();
    const kept = await p.newSession(root);
    const gone = await p.newSession(root);
    llm().script([{ text: 'kept answer' }]);
    await p.prompt(kept, 'keep me');
    llm().script([{ text: 'slow ' }, { stall: 'forever' }]);
    const running = p.prompt(gone, 'delete me');
    await p.until(() => p.text(gone).includes('slow'), 'the running turn');
    expect(await p.agent.request(methods.agent.session.delete, { sessionId: gone })).toEqual({});
    expect((await running).stopReason).toBe('cancelled');
    const listed = (await p.agent.request(methods.agent.session.list, { cwd: root })).sessions.map((s) => s.sessionId);
    expect(listed).toContain(kept);
    expect(listed).not.toContain(gone);
    await expect(p.agent.request(methods.agent.session.load, { sessionId: gone, cwd: root, mcpServers: [] })).rejects.toMatchObject({ code: -32002 });
    await expect(p.prompt(gone, 'still there?')).rejects.toMatchObject({ code: -32002 });
    // Deleting it again: the agent answers -32002, which the SDK's client takes as done (deleting is idempotent).
    expect(await p.agent.request(methods.agent.session.delete, { sessionId: gone })).toEqual({});
    await p.stop();

    const again = start();
    await again.initialize();
    await expect(again.agent.request(methods.agent.session.resume, { sessionId: gone, cwd: root })).rejects.toMatchObject({ code: -32002 });
    // Deleting before any session/new (a fresh process) works on the store too.
    expect(await again.agent.request(methods.agent.session.delete, { sessionId: kept })).toEqual({});
    expect((await again.agent.request(methods.agent.session.list, { cwd: root })).sessions).toEqual([]);
  });

  it('logout forgets the login authenticate took: the next prompt is auth_required again', async () => {
    const home = scratch(tempDir());
    const root = scratch(workspace({ 'a.txt': 'a\n' }));
    // Built-in `openai` pointed at the fake: without a key it has no models (as in acp-auth.test.ts).
    const config = { providers: { openai: { url: `${llm().url}/v1`, models: { m1: {} } } }, defaultModel: 'openai/m1', chat: { generateTitles: false } };
    const env = { PATCHBAY_SECRET_STORE: 'file' };
    const p = track(new AcpProc({ home, config, env }));
    await p.initialize({ auth: { terminal: true } });
    const sessionId = await p.newSession(root);
    const login = await runPatchbay(['login', 'openai', '--method', 'api-key'], {
      home,
      env: { ...env, PATCHBAY_CONFIG: JSON.stringify({ gateway: { port: 0 }, ...config }) },
      stdin: 'sk-acp-logout-key\n',
    });
    expect(login.code, login.stderr).toBe(0);
    expect(await p.agent.request(methods.agent.authenticate, { methodId: 'login' })).toEqual({});
    llm().script([{ text: 'logged in' }]);
    expect((await p.prompt(sessionId, 'hi')).stopReason).toBe('end_turn');

    expect(await p.agent.request(methods.agent.logout, {})).toEqual({});
    await expect(p.prompt(sessionId, 'hi again')).rejects.toMatchObject({ code: -32000, message: expect.stringContaining('No LLM is configured') as string });
    // The stored login is gone for good: authenticate finds nothing to take.
    await expect(p.agent.request(methods.agent.authenticate, { methodId: 'login' })).rejects.toMatchObject({ code: -32000 });
    expect(JSON.stringify(llm().requests.map((r) => r.body))).not.toContain('hi again');
  });
});

describe('patchbay acp: compaction, usage and message ids', () => {
  it('/compact shows as compaction_update in progress, the summary as a chunk, then completed; usage starts afresh', async () => {
    const { root, start } = setup();
    const p = start();
    await p.initialize({ session: { compaction: {} } });
    const sessionId = await p.newSession(root);
    llm().script([{ text: 'hello there' }]);
    await p.prompt(sessionId, 'hi');
    expect(ofKind(p.updates(sessionId), 'usage_update').at(-1)).toMatchObject({ size: 100_000, used: expect.any(Number) as number, cost: { currency: 'USD' } });
    llm().script([{ text: 'Summary: a greeting.' }]);
    expect((await p.prompt(sessionId, '/compact')).stopReason).toBe('end_turn');
    const u = p.updates(sessionId);
    const updates = ofKind(u, 'compaction_update');
    expect(updates.map((x) => x.status)).toEqual(['in_progress', 'completed']);
    const id = updates[0]!.compactionId;
    expect(updates[1]!.compactionId).toBe(id);
    const chunks = ofKind(u, 'compaction_summary_chunk');
    expect(chunks).toEqual([expect.objectContaining({ compactionId: id, content: { type: 'text', text: 'Summary: a greeting.' } })]);
    // Between the two updates, in order; then the context meter is empty.
    expect(u.indexOf(chunks[0]!)).toBeGreaterThan(u.indexOf(updates[0]!));
    expect(u.indexOf(chunks[0]!)).toBeLessThan(u.indexOf(updates[1]!));
    expect(u.slice(u.indexOf(updates[1]!)).find((x) => x.sessionUpdate === 'usage_update')).toMatchObject({ used: 0, size: 100_000 });

    // A failed summary says so, with the reason.
    llm().script([{ text: 'more to compact' }], { status: 400, body: { error: { message: 'bad request' } } });
    await p.prompt(sessionId, 'again');
    await p.prompt(sessionId, '/compact');
    const failed = ofKind(p.updates(sessionId), 'compaction_update').at(-1);
    expect(failed).toMatchObject({ status: 'failed', error: expect.stringContaining('Compacting failed') as string });
    expect(failed!.compactionId).not.toBe(id);
    expectSchemaValid(p);
  });

  it('auto-compaction (a step past 75% of the window) shows the same way, inside the prompt that compacts', async () => {
    const config = fakeProviderConfig(llm().url) as { providers: { fake: { models: { m1: Record<string, unknown> } } } };
    config.providers.fake.models.m1.limit = { context: 40_000, output: 100 };
    const { root, start } = setup(config);
    const p = start();
    await p.initialize({ session: { compaction: {} } });
    const sessionId = await p.newSession(root);
    llm().script([{ text: 'noted' }], [{ text: 'The user shared a long note.' }], [{ text: 'done' }]);
    await p.prompt(sessionId, `Remember this note: ${'n'.repeat(40_000 * 4 * 0.8)}`);
    expect(ofKind(p.updates(sessionId), 'compaction_update')).toEqual([]);
    const before = p.updates(sessionId).length;
    expect((await p.prompt(sessionId, 'and now?')).stopReason).toBe('end_turn');
    const u = p.updates(sessionId).slice(before);
    expect(ofKind(u, 'compaction_update').map((x) => x.status)).toEqual(['in_progress', 'completed']);
    expect(ofKind(u, 'compaction_summary_chunk')[0]?.content).toMatchObject({ type: 'text', text: expect.stringContaining('The user shared a long note.') as string });
    expect(p.text(sessionId)).toContain('done');
    expectSchemaValid(p);
  });

  it('a client without the compaction capability gets no compaction updates (ACP: only when advertised)', async () => {
    const { root, start } = setup();
    const p = start();
    await p.initialize();
    const sessionId = await p.newSession(root);
    llm().script([{ text: 'hello there' }], [{ text: 'Summary: a greeting.' }]);
    await p.prompt(sessionId, 'hi');
    expect((await p.prompt(sessionId, '/compact')).stopReason).toBe('end_turn');
    expect(p.updates(sessionId).filter((u) => u.sessionUpdate.startsWith('compaction'))).toEqual([]);
  });

  it('every chunk has a messageId, shared within a message, new for the next, and the same in a session/load replay', async () => {
    const { root, start } = setup();
    const first = start();
    await first.initialize();
    const sessionId = await first.newSession(root);
    llm().script([{ reasoning: 'Think first.' }, { text: 'Reading a.txt now.' }, { toolCall: { id: 'r1', name: 'patchbay__read_file', args: { path: 'a.txt' } } }], [{ text: 'It says alpha.' }]);
    expect((await first.prompt(sessionId, 'what is in a.txt?')).stopReason).toBe('end_turn');
    const idsOf = (us: SessionUpdate[], k: 'agent_message_chunk' | 'agent_thought_chunk') => ofKind(us, k).map((c) => c.messageId);
    const live = idsOf(first.updates(sessionId), 'agent_message_chunk');
    expect(live.length).toBeGreaterThanOrEqual(2);
    expect(live.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    // Two messages (before and after the tool call), each chunk naming its own.
    const distinct = [...new Set(live)];
    expect(distinct).toHaveLength(2);
    expect(live.indexOf(distinct[1])).toBeGreaterThan(live.lastIndexOf(distinct[0]));
    const thought = idsOf(first.updates(sessionId), 'agent_thought_chunk');
    expect(thought).toHaveLength(1);
    expect(distinct).not.toContain(thought[0]);
    expectSchemaValid(first);
    await first.stop();

    const second = start();
    await second.initialize();
    await second.agent.request(methods.agent.session.load, { sessionId, cwd: root, mcpServers: [] });
    const replay = second.updates(sessionId);
    // The replay sends each message whole: one chunk each, with the id it had live.
    expect(idsOf(replay, 'agent_message_chunk')).toEqual(distinct);
    expect(idsOf(replay, 'agent_thought_chunk')).toEqual(thought);
    const user = ofKind(replay, 'user_message_chunk');
    expect(user).toHaveLength(1);
    expect(user[0]!.messageId).toEqual(expect.any(String));
    expectSchemaValid(second);
  });
});

describe('patchbay acp: a session never prompted', () => {
  it('is kept by the store: after a restart it is listed, loads with its mode and model, resumes, and its first prompt runs', async () => {
    const config = fakeProviderConfig(llm().url) as { providers: { fake: { models: Record<string, unknown> } } };
    config.providers.fake.models.m2 = {};
    const { root, start } = setup(config);
    const first = start();
    await first.initialize();
    const loaded = await first.newSession(root);
    const resumed = await first.newSession(root);
    await first.agent.request(methods.agent.session.setMode, { sessionId: loaded, modeId: 'plan' });
    await first.agent.request(methods.agent.session.setConfigOption, { sessionId: loaded, configId: 'model', value: 'fake/m2' });
    await first.stop();

    const second = start();
    await second.initialize();
    const listed = (await second.agent.request(methods.agent.session.list, { cwd: root })).sessions;
    expect(listed.map((s) => s.sessionId).sort()).toEqual([loaded, resumed].sort());
    expect(listed.every((s) => s.cwd === root)).toBe(true);
    const r = await second.agent.request(methods.agent.session.load, { sessionId: loaded, cwd: root, mcpServers: [] });
    expect(r.modes?.currentModeId).toBe('plan');
    expect(r.configOptions?.find((o) => o.id === 'model')).toMatchObject({ currentValue: 'fake/m2' });
    expect(await second.agent.request(methods.agent.session.resume, { sessionId: resumed, cwd: root })).toMatchObject({ modes: { currentModeId: 'code' } });
    llm().script([{ text: 'first words' }]);
    expect((await second.prompt(loaded, 'hello')).stopReason).toBe('end_turn');
    expect(
      llm()
        .requests.filter((q) => q.path === '/v1/chat/completions')
        .at(-1)?.body.model,
    ).toBe('m2');
    llm().script([{ text: 'more words' }]);
    expect((await second.prompt(resumed, 'hello too')).stopReason).toBe('end_turn');
    expect(second.text(resumed)).toBe('more words');
  });
});
