/**
 * `patchbay acp` driven by a real third-party ACP client: acpx 0.19.1 (npm, Node 22; see
 * test/e2e/acpx.ts), over real stdio, with the fake LLM (test/fixtures/fake-llm.ts) asking for a
 * `patchbay__edit_file` call and then answering text. What the tests expect follows acpx's
 * source (openclaw/acpx): src/permissions.ts `resolvePermissionRequest` (--approve-all selects an
 * allow_once/allow_always option, --deny-all a reject option or `cancelled`), src/filesystem.ts
 * `FileSystemHandlers.writeTextFile` (acpx advertises fs write and performs the write itself,
 * refusing it under --deny-all), and src/types.ts `EXIT_CODES` (0 ok, 5 some permission denied and
 * none approved); on the agent side ACP v1's prompt-turn.mdx and tool-calls.mdx (a tool call's
 * `content[]` carries `{type:'diff', path, oldText, newText}`; the prompt resolves with a
 * `stopReason`; a persistent session reconnects with `session/resume` when the agent offers it,
 * src `resumeSessionRecordWithClient`). Build first (`npm run build`); Node 22 and acpx come from
 * `node scripts/ensure-node22.mjs` (npm test runs it).
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { ACPX_EXIT, assertAcpxInstalled, processesWithHome, runAcpx, runAcpxCommand, type AcpxLine, type AcpxRun } from './acpx.js';
import { AcpProc, useAcpProcs } from './acp-harness.js';
import { fakeProviderConfig, tempDir, useTempDirs, workspace } from './harness.js';

assertAcpxInstalled();

const scratch = useTempDirs();
const llm = useFakeLlm();
const track = useAcpProcs();

const BEFORE = 'const a = 1;\nconst b = 2;\n';
const AFTER = 'const a = 1;\nconst b = 3;\n';

/** The fake model: edit m.ts through patchbay's edit_file, then say it is done (whatever the tool said). */
function scriptEdit(): void {
  llm().script([{ toolCall: { id: 'e1', name: 'patchbay__edit_file', args: { path: 'm.ts', original_content: 'const b = 2;', new_content: 'const b = 3;' } } }], [{ text: 'edited m.ts' }]);
}

/** The fake provider; edit_file asks (it is not read-only): said outright so the test does not lean on the default. */
function config(): Record<string, unknown> {
  return fakeProviderConfig(llm().url, 'openai-chat', { toolCall: { approval: { ask: { edit_file: {} } } } });
}

/** The agent → client request `method` (it has an id), and the client's answer to it printed after it. */
function requestAndAnswer(lines: AcpxLine[], method: string): { request: AcpxLine; answer: AcpxLine | undefined } | undefined {
  const i = lines.findIndex((l) => l.method === method && l.id !== undefined);
  if (i < 0) return undefined;
  const request = lines[i];
  // Both sides number their own requests, so an id can repeat across directions: take the first
  // answer after the request.
  const answer = lines.slice(i + 1).find((l) => l.method === undefined && l.id === request.id && ('result' in l || 'error' in l));
  return { request, answer };
}

function updates(lines: AcpxLine[]): any[] {
  return lines.filter((l) => l.method === 'session/update').map((l) => l.params.update);
}

/** What the prompt resolved with: the one response carrying a stopReason. */
function stopReason(lines: AcpxLine[]): string | undefined {
  return lines.find((l) => l.method === undefined && typeof l.result?.stopReason === 'string')?.result.stopReason;
}

/** Waits (generously) until no process with this temp HOME is left: acpx and patchbay are gone. */
async function nothingLeft(home: string): Promise<number[]> {
  const deadline = Date.now() + 10_000;
  let left = processesWithHome(home);
  while (left.length && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    left = processesWithHome(home);
  }
  return left;
}

describe('patchbay acp under acpx --approve-all', () => {
  // One acpx run, looked at from several sides (each run costs seconds of two cold Node starts).
  let root = '';
  let home = '';
  let run: AcpxRun;
  let why = '';
  let path = '';
  beforeAll(async () => {
    root = workspace({ 'm.ts': BEFORE });
    home = tempDir('pb-acpx-home-');
    path = join(root, 'm.ts');
    scriptEdit();
    run = await runAcpx('change b to 3 in m.ts', { cwd: root, home, config: config(), permissions: 'approve-all' });
    why = `rc ${run.code}\nstderr:\n${run.stderr.slice(-3000)}\nstdout:\n${run.stdout.slice(-6000)}`;
  }, 90_000);
  afterAll(() => {
    for (const d of [root, home]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it('the edit asks permission; acpx picks an offered allow option and the call completes', () => {
    const perm = requestAndAnswer(run.lines, 'session/request_permission');
    expect(perm, why).toBeDefined();
    expect(perm!.request.params.toolCall).toMatchObject({ kind: 'edit' });
    const offered = perm!.request.params.options as Array<{ optionId: string; kind: string }>;
    expect(perm!.answer?.result?.outcome?.outcome, why).toBe('selected');
    const picked = offered.find((o) => o.optionId === perm!.answer!.result.outcome.optionId);
    expect(picked?.kind, why).toMatch(/^allow_(once|always)$/);
    const id = perm!.request.params.toolCall.toolCallId;
    expect(
      updates(run.lines).some((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === id && u.status === 'completed'),
      why,
    ).toBe(true);
  });

  it('the edit arrives as a diff: absolute path, old and new text', () => {
    const toolUpdates = updates(run.lines).filter((u) => u.sessionUpdate === 'tool_call' || u.sessionUpdate === 'tool_call_update');
    const diffs = toolUpdates.flatMap((u) => (u.content ?? []) as any[]).filter((c) => c.type === 'diff');
    expect(diffs.length, why).toBeGreaterThan(0);
    expect(diffs[0]).toMatchObject({ type: 'diff', path });
    expect(diffs[0].oldText).toContain('const b = 2;');
    expect(diffs[0].newText).toContain('const b = 3;');
    expect(diffs[0].newText).not.toContain('const b = 2;');
  });

  it('the new text is written through acpx (fs/write_text_file) and is on disk', () => {
    const write = requestAndAnswer(run.lines, 'fs/write_text_file');
    expect(write, why).toBeDefined();
    expect(write!.request.params).toMatchObject({ path, content: AFTER });
    expect(write!.answer?.result, why).toEqual({});
    expect(readFileSync(path, 'utf8')).toBe(AFTER);
  });

  it("the turn ends end_turn after the model's text; acpx exits 0 and leaves no process", async () => {
    expect(
      updates(run.lines)
        .filter((u) => u.sessionUpdate === 'agent_message_chunk')
        .map((u) => u.content.text)
        .join(''),
    ).toBe('edited m.ts');
    expect(stopReason(run.lines), why).toBe('end_turn');
    expect(run.code, why).toBe(ACPX_EXIT.ok);
    expect(await nothingLeft(home)).toEqual([]);
  });
});

describe('patchbay acp under acpx --deny-all', () => {
  it('the permission is refused, m.ts stays as it was, no write is asked, rc 5', async () => {
    const root = scratch(workspace({ 'm.ts': BEFORE }));
    const home = scratch(tempDir('pb-acpx-home-'));
    scriptEdit();
    const run = await runAcpx('change b to 3 in m.ts', { cwd: root, home, config: config(), permissions: 'deny-all' });
    const why = `rc ${run.code}\nstderr:\n${run.stderr.slice(-3000)}\nstdout:\n${run.stdout.slice(-6000)}`;

    const perm = requestAndAnswer(run.lines, 'session/request_permission');
    expect(perm, why).toBeDefined();
    const outcome = perm!.answer?.result?.outcome;
    if (outcome?.outcome === 'selected') {
      const offered = perm!.request.params.options as Array<{ optionId: string; kind: string }>;
      expect(offered.find((o) => o.optionId === outcome.optionId)?.kind).toMatch(/^reject_/);
    } else {
      expect(outcome?.outcome, why).toBe('cancelled');
    }
    // Nothing was written: neither asked of acpx nor done behind its back.
    expect(run.lines.some((l) => l.method === 'fs/write_text_file')).toBe(false);
    expect(readFileSync(join(root, 'm.ts'), 'utf8')).toBe(BEFORE);
    // The call is reported failed, never completed.
    const calls = updates(run.lines).filter((u) => u.sessionUpdate === 'tool_call_update');
    expect(calls.some((u) => u.status === 'completed')).toBe(false);
    expect(run.code, why).toBe(ACPX_EXIT.permissionDenied);
    expect(await nothingLeft(home)).toEqual([]);
  });
});

describe('patchbay acp under acpx --cwd <home folder>', () => {
  it('session/new is refused with -32602 naming the home folder (issue 28 point 11); acpx fails and nothing is left', async () => {
    const home = scratch(tempDir('pb-acpx-home-'));
    llm().script([{ text: 'must not be asked' }]);
    const run = await runAcpx('hi', { cwd: home, home, config: config(), permissions: 'approve-all' });
    const why = `rc ${run.code}\nstderr:\n${run.stderr.slice(-3000)}\nstdout:\n${run.stdout.slice(-6000)}`;
    const asked = requestAndAnswer(run.lines, 'session/new');
    expect(asked?.request.params.cwd, why).toBe(home);
    expect(asked?.answer?.error, why).toMatchObject({ code: -32602, message: expect.stringContaining(`cwd ${home} is your home folder`) });
    expect(
      run.lines.some((l) => l.method === 'session/prompt'),
      why,
    ).toBe(false);
    expect(run.code, why).not.toBe(ACPX_EXIT.ok);
    expect(llm().requests).toEqual([]);
    expect(await nothingLeft(home)).toEqual([]);
  });
});

describe('patchbay acp under acpx persistent sessions', () => {
  it('acpx picks session/resume to reconnect (agentCapabilities.sessionCapabilities.resume): no replay, and its prompt continues the chat', async () => {
    const root = scratch(workspace({ 'a.txt': 'a\n' }));
    const home = scratch(tempDir('pb-acpx-home-'));
    // The chat made outside acpx (as another editor would), then adopted with `sessions new --resume-session`.
    const first = track(new AcpProc({ home, config: config() }));
    await first.initialize();
    const sessionId = await first.newSession(root);
    llm().script([{ text: 'zebra noted' }]);
    expect((await first.prompt(sessionId, 'remember the word zebra')).stopReason).toBe('end_turn');
    await first.stop();

    const opts = { cwd: root, home, config: config(), permissions: 'approve-all' as const };
    const adopted = await runAcpxCommand(['sessions', 'new', '--resume-session', sessionId], opts);
    expect(adopted.code, adopted.stderr).toBe(ACPX_EXIT.ok);
    llm().script([{ text: 'you said zebra' }]);
    const run = await runAcpxCommand(['prompt', 'which word did I say?'], opts);
    const why = `rc ${run.code}\nstderr:\n${run.stderr.slice(-3000)}\nstdout:\n${run.stdout.slice(-6000)}`;
    // acpx's reconnect (queue-owner runtime `resumeSessionRecordWithClient`) prefers session/resume when offered.
    const resumed = requestAndAnswer(run.lines, 'session/resume');
    expect(resumed, why).toBeDefined();
    expect(resumed!.request.params).toMatchObject({ sessionId, cwd: root });
    expect(resumed!.answer?.result?.modes?.currentModeId, why).toBe('code');
    expect(run.lines.some((l) => l.method === 'session/load')).toBe(false);
    // Nothing of the earlier turn is sent again; the model still reads it.
    expect(updates(run.lines).filter((u) => u.sessionUpdate === 'user_message_chunk' || (u.sessionUpdate === 'agent_message_chunk' && u.content.text === 'zebra noted'))).toEqual([]);
    expect(stopReason(run.lines), why).toBe('end_turn');
    expect(JSON.stringify(llm().requests.at(-1)?.body.messages)).toContain('remember the word zebra');
    const closed = await runAcpxCommand(['sessions', 'close'], opts);
    expect(closed.code, closed.stderr).toBe(ACPX_EXIT.ok);
    expect(await nothingLeft(home)).toEqual([]);
  }, 90_000);
});
