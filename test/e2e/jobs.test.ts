/**
 * Background jobs over the built binary (issue 17, point 5). The fake LLM starts a job as ECA's
 * models do: `shell_command` with `background` set to a description (ECA
 * `src/eca/features/tools/shell.clj` `background-shell-command`, its result text and 2 s wait
 * for the first output), then follows it with `bg_job` (`src/eca/features/tools/background.clj`
 * `action-read-output`, `action-kill`: an incremental cursor). The editor's side is what the
 * Jobs panels send: eca-emacs `eca-jobs.el` (`eca-jobs--kill-at-point` → `jobs/kill`,
 * `eca-jobs--view-output-by-id` → `jobs/readOutput`, `eca-jobs--handle-jobs-updated`), eca-webview
 * `src/redux/thunks/jobs.ts` (`fetchJobOutput`, `killJob`) and eca-desktop `src/main/router.ts`
 * (`jobs/list`, `jobs/readOutput`, `jobs/kill`), answered as ECA's `src/eca/handlers.clj`
 * `jobs-list`, `jobs-kill`, `jobs-read-output` (`peek-output`: a snapshot, the model's cursor
 * stays) and announced as `jobs/updated` (docs/protocol.md "Jobs Updated").
 */
import { readFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, useTempDirs, workspace, type Msg } from './harness.js';
import { isAlive } from '../../src/util/pid.js';
import { reaperOf } from '../support/job-reaper.js';

const scratch = useTempDirs();
const { llm, track } = useFakeLlmSuite();

/** The jobs' pids this test saw: a failing test must not leave them running. */
const seen: number[] = [];
afterEach(() => {
  for (const pid of seen.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone, as it should be */
    }
  }
});

/**
 * A job that prints a line on stdout and one on stderr, starts two long-lived grandchildren (one
 * in its process group, one in a session of its own), writes their pids, then ticks every 100 ms.
 */
const JOB = `
const { spawn } = require('node:child_process');
const { writeFileSync } = require('node:fs');
const keep = 'setInterval(() => {}, 1000)';
const inGroup = spawn(process.execPath, ['-e', keep], { stdio: 'ignore' });
const ownSession = spawn(process.execPath, ['-e', keep], { stdio: 'ignore', detached: true });
writeFileSync('pids.json', JSON.stringify({ job: process.pid, inGroup: inGroup.pid, ownSession: ownSession.pid }));
console.log('ready');
console.error('warming up');
let n = 0;
setInterval(() => console.log('tick ' + ++n), 100);
`;

async function boot(approval: Record<string, unknown> = { byDefault: 'allow' }) {
  const root = scratch(workspace({ 'job.cjs': JOB }));
  const home = scratch(tempDir());
  // Unsandboxed: the job writes the pids it sees, which in the sandbox are its pid namespace's (jobs-grandchildren.test.ts covers the sandbox).
  const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url, 'openai-chat', { toolCall: { approval }, sandbox: { enabled: false } }) }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === 'config/updated');
  return { p, root, home };
}

function content(p: EcaProc, chatId: string, type: string) {
  return p
    .contents(chatId)
    .filter((c) => c.content.type === type)
    .map((c) => c.content);
}

function called(p: EcaProc, chatId: string, id: string): { error: boolean; text: string } {
  const c = content(p, chatId, 'toolCalled').find((x) => x.id === id);
  if (!c) throw new Error(`no toolCalled ${id}`);
  return { error: c.error, text: c.outputs.map((o: { text: string }) => o.text).join('') };
}

/** Has the fake LLM start `command` in the background, then answer; returns the chat id. */
async function startJob(p: EcaProc, command: string, background: string | boolean = 'ticker'): Promise<string> {
  llm().script([{ toolCall: { id: 'start', name: 'patchbay__shell_command', args: { command, background } } }], [{ text: 'started' }]);
  const chatId = (await p.request(ECA.chatPrompt, { message: 'start it' })).result.chatId;
  await p.turnDone(chatId);
  return chatId;
}

async function pidsOf(root: string): Promise<{ job: number; inGroup: number; ownSession: number }> {
  const file = join(root, 'pids.json');
  await until(() => existsSync(file), 'pids.json');
  const pids = JSON.parse(readFileSync(file, 'utf8')) as { job: number; inGroup: number; ownSession: number };
  seen.push(pids.job, pids.inGroup, pids.ownSession);
  return pids;
}

async function until(ok: () => boolean, what: string, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !ok();) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const gone = (pids: { job: number; inGroup: number; ownSession: number }) => () => !isAlive(pids.job) && !isAlive(pids.inGroup) && !isAlive(pids.ownSession);

function jobsUpdated(p: EcaProc, from = 0): Msg[] {
  return p.messages.slice(from).filter((m) => m.method === ECA.jobsUpdated.method);
}

describe('background jobs', () => {
  it('asks as a background job, starts it, lists it and announces it; the tool reads new output, jobs/readOutput a snapshot; jobs/kill stops the whole tree', async () => {
    // shell_command asks (the default); reading a job's output is allowed as a user would allow it.
    const { p, root } = await boot({ allow: { bg_job: { argsMatchers: { action: ['read_output'] } } } });
    llm().script([{ toolCall: { id: 'start', name: 'patchbay__shell_command', args: { command: 'node job.cjs', background: 'ticker' } } }], [{ text: 'started' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'start it' })).result.chatId;
    const run = await p.waitFor((m) => m.params?.content?.type === 'toolCallRun' && m.params.content.id === 'start', 'toolCallRun');
    // The approval says what it is: a job left running, with its description and command.
    expect(run.params.content).toMatchObject({ manualApproval: true, summary: 'Starting background job "ticker": node job.cjs' });
    p.notify(ECA.chatToolCallApprove, { chatId, toolCallId: 'start' });
    await p.turnDone(chatId);

    const start = called(p, chatId, 'start');
    expect(start.error).toBe(false);
    // ECA shell.clj `tool-call-details-before-invocation` marks it `background`: eca-webview
    // ChatToolCall.tsx (`isBackground`, linked to the job by toolCallId) and eca-emacs eca-chat.el (`bg?` → 🟡) read it.
    expect(content(p, chatId, 'toolCalled').find((c) => c.id === 'start')!.details).toEqual({ type: 'shellCommand', commands: [], background: true });
    expect(start.text).toContain('Background job job-1 started.\nCommand: node job.cjs\n');
    expect(start.text).toContain('Use patchbay__bg_job with action "read_output" and job_id "job-1" to check output.');
    expect(start.text).toMatch(/Initial output:\n(.|\n)*ready/);
    expect(start.text).toContain('[stderr] warming up');
    const initialTicks = [...start.text.matchAll(/tick (\d+)/g)].map((m) => Number(m[1]));
    const pids = await pidsOf(root);
    expect(isAlive(pids.inGroup) && isAlive(pids.ownSession)).toBe(true);

    // jobs/updated on start, and jobs/list: ECA's JobSummary.
    const created = jobsUpdated(p)[0];
    expect(created.params.jobs).toEqual([
      expect.objectContaining({ id: 'job-1', type: 'shell', status: 'running', label: 'node job.cjs', summary: 'ticker', exitCode: null, chatId, toolCallId: 'start' }),
    ]);
    const listed = (await p.request(ECA.jobsList, {})).result.jobs[0];
    expect(listed).toMatchObject({ id: 'job-1', status: 'running', chatId });
    expect(listed.elapsed).toMatch(/^\d+s$/);
    expect(new Date(listed.startedAt).toISOString()).toBe(listed.startedAt);
    expect(typeof listed.chatLabel).toBe('string');

    // The editor's snapshot: every kept line with its stream, twice the same start (no cursor).
    const snap = (await p.request(ECA.jobsReadOutput, { jobId: 'job-1' })).result;
    expect(snap).toMatchObject({ status: 'running', exitCode: null });
    expect(snap.lines.slice(0, 2)).toEqual(
      expect.arrayContaining([
        { text: 'ready', stream: 'stdout' },
        { text: 'warming up', stream: 'stderr' },
      ]),
    );
    expect((await p.request(ECA.jobsReadOutput, { jobId: 'job-1' })).result.lines[0]).toEqual(snap.lines[0]);
    // Snapshots until one holds a tick the model has not read yet: its read below must still get it.
    const next = (initialTicks.at(-1) ?? 0) + 1;
    for (let seen = false; !seen;) {
      const lines = (await p.request(ECA.jobsReadOutput, { jobId: 'job-1' })).result.lines as Array<{ text: string }>;
      seen = lines.some((l) => l.text === `tick ${next}`);
      if (!seen) await new Promise((r) => setTimeout(r, 50));
    }

    // The model's reads: what is new since its last read, the snapshot notwithstanding.
    llm().script(
      [{ toolCall: { id: 'r1', name: 'patchbay__bg_job', args: { action: 'read_output', job_id: 'job-1' } } }],
      [{ toolCall: { id: 'r2', name: 'patchbay__bg_job', args: { action: 'read_output', job_id: 'job-1' } } }],
      [{ text: 'read' }],
    );
    await p.request(ECA.chatPrompt, { chatId, message: 'how is it going?' });
    await p.turnDone(chatId, 2);
    expect(content(p, chatId, 'toolCallRun').find((c) => c.id === 'r1')).toMatchObject({ manualApproval: false, summary: 'Reading output of "ticker" (job-1)' });
    const r1 = called(p, chatId, 'r1').text;
    expect(r1).toMatch(/^Job "ticker" \(job-1\) — running\n\n/);
    expect(r1).not.toContain('ready');
    expect(r1).toMatch(new RegExp(`^tick ${next}$`, 'm'));
    const r1Ticks = new Set([...r1.matchAll(/tick (\d+)/g)].map((m) => m[1]));
    const r2 = called(p, chatId, 'r2').text;
    for (const m of r2.matchAll(/tick (\d+)/g)) expect(r1Ticks.has(m[1])).toBe(false);

    // eca-emacs's spelling (eca-jobs.el: `(list :job-id job-id)` is sent as "job-id").
    expect((await p.request(ECA.jobsReadOutput, { 'job-id': 'job-1' })).result).toMatchObject({ status: 'running', lines: expect.arrayContaining([{ text: 'ready', stream: 'stdout' }]) });

    // jobs/kill (as eca-emacs sends it): the job, its grandchild in the group and the one in its own session all go.
    const before = p.messages.length;
    expect((await p.request(ECA.jobsKill, { 'job-id': 'job-1' })).result).toEqual({ killed: true });
    const killed = await p.waitFor((m) => m.method === ECA.jobsUpdated.method, 'jobs/updated after kill', 5_000, before);
    // ECA handlers.clj `jobs-kill` sends jobs/updated, then answers.
    const answerAt = p.messages.findIndex((m, i) => i >= before && m.result?.killed === true);
    expect(p.messages.indexOf(killed)).toBeLessThan(answerAt);
    expect(killed.params.jobs[0]).toMatchObject({ id: 'job-1', status: 'killed', exitCode: null });
    await until(gone(pids), 'the job tree to be gone');
    expect((await p.request(ECA.jobsReadOutput, { jobId: 'job-1' })).result).toMatchObject({ status: 'killed', exitCode: null });
    // Not running any more, or never known: false, as ECA.
    expect((await p.request(ECA.jobsKill, { jobId: 'job-1' })).result).toEqual({ killed: false });
    expect((await p.request(ECA.jobsKill, { jobId: 'job-99' })).result).toEqual({ killed: false });
    expect((await p.request(ECA.jobsReadOutput, { jobId: 'job-99' })).result).toEqual({ lines: [], status: null, exitCode: null });
    expect((await p.request(ECA.jobsReadOutput, {})).error).toMatchObject({ code: -32602 });
  });

  it('bg_job kill stops the tree; list shows it killed; a job that ends is announced completed, one that fails at once is an error result', async () => {
    const { p, root } = await boot();
    const chatId = await startJob(p, 'node job.cjs', true);
    const pids = await pidsOf(root);
    llm().script(
      [{ toolCall: { id: 'k', name: 'patchbay__bg_job', args: { action: 'kill', job_id: 'job-1' } } }],
      [{ toolCall: { id: 'l', name: 'patchbay__bg_job', args: { action: 'list' } } }],
      [{ toolCall: { id: 'ok', name: 'patchbay__shell_command', args: { command: 'sleep 0.3; echo fine', background: 'short' } } }],
      [{ toolCall: { id: 'bad', name: 'patchbay__shell_command', args: { command: 'echo oops >&2; exit 3', background: 'doomed' } } }],
      [{ toolCall: { id: 'miss', name: 'patchbay__bg_job', args: { action: 'read_output' } } }],
      [{ text: 'done' }],
    );
    const before = p.messages.length;
    await p.request(ECA.chatPrompt, { chatId, message: 'stop it' });
    await p.turnDone(chatId, 2);
    expect(called(p, chatId, 'k')).toEqual({ error: false, text: 'Background job job-1 killed.' });
    await until(gone(pids), 'the job tree to be gone');
    expect(called(p, chatId, 'l').text).toMatch(/^- job-1 \[shell\] killed \| \d+s \| node job\.cjs$/m);
    // It ended within the 2 s wait: not "started" (what it left running is gone).
    expect(called(p, chatId, 'ok')).toEqual({
      error: false,
      text: 'Background job job-2 already exited (exit 0); processes it left running were stopped; do not end a background command with `&`.\nOutput:\nfine',
    });
    expect(called(p, chatId, 'bad')).toEqual({ error: true, text: 'Background job job-3 failed immediately (exit code 3).\nOutput:\n[stderr] oops' });
    expect(called(p, chatId, 'miss')).toEqual({ error: true, text: 'job_id is required for read_output action.' });

    // One jobs/updated per change: kill, start, end; start, end.
    const states = jobsUpdated(p, before).map((m) => m.params.jobs.map((j: { id: string; status: string }) => `${j.id}:${j.status}`).join(' '));
    expect(states).toEqual(['job-1:killed', 'job-1:killed job-2:running', 'job-1:killed job-2:completed', 'job-1:killed job-2:completed job-3:running', 'job-1:killed job-2:completed job-3:failed']);
    const last = jobsUpdated(p).at(-1)!.params.jobs;
    expect(last[1]).toMatchObject({ status: 'completed', exitCode: 0, summary: 'short' });
    expect(last[2]).toMatchObject({ status: 'failed', exitCode: 3, summary: 'doomed' });
  });

  it('the model is told when a job of its chat ends, with the end of its output, at its next prompt (ECA chat.clj consume-pending-job-notifications!)', async () => {
    const { p } = await boot();
    const chatId = await startJob(p, 'sleep 4; echo one; echo two >&2; exit 5', 'late');
    await p.waitFor((m) => m.method === ECA.jobsUpdated.method && m.params.jobs[0]?.status === 'failed', 'the job to end', 20_000);
    llm().script([{ text: 'noted' }]);
    await p.request(ECA.chatPrompt, { chatId, message: 'anything new?' });
    await p.turnDone(chatId, 2);
    const sent = JSON.stringify(llm().requests.at(-1)!.body.messages);
    expect(sent).toContain(JSON.stringify('Background job job-1 (`sleep 4; echo one; echo two >&2; exit 5`) failed with exit code 5.\nLast 2 lines of output:\none\n[stderr] two').slice(1, -1));
  });

  it('a job ending after the last model step starts no turn; a stop keeps its notice; both reach the next prompt (ECA chat.clj pending-job-notifications, consumed at model steps only)', async () => {
    const { p } = await boot();
    // job-1 outlives the 2 s wait and ends while the turn's last answer streams.
    llm().script([{ toolCall: { id: 'one', name: 'patchbay__shell_command', args: { command: 'sleep 2.5; exit 3', background: 'one' } } }], [{ delay: 2_500 }, { text: 'done' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'start it' })).result.chatId;
    await p.turnDone(chatId);
    expect(p.messages.some((m) => m.method === ECA.jobsUpdated.method && m.params.jobs[0]?.status === 'failed')).toBe(true);
    // Before, the leftover notice became a prompt of its own as the turn ended.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(llm().requests.length).toBe(2);
    // job-2 ends while the turn waits on the model; the user stops that turn.
    llm().script([{ toolCall: { id: 'two', name: 'patchbay__shell_command', args: { command: 'sleep 2.5; exit 4', background: 'two' } } }], [{ stall: 'forever' }]);
    await p.request(ECA.chatPrompt, { chatId, message: 'another' });
    await p.waitFor((m) => m.method === ECA.jobsUpdated.method && m.params.jobs[1]?.status === 'failed', 'job-2 to end', 20_000);
    p.notify('chat/promptStop', { chatId });
    await p.turnDone(chatId, 2);
    llm().script([{ text: 'noted' }]);
    await p.request(ECA.chatPrompt, { chatId, message: 'anything new?' });
    await p.turnDone(chatId, 3);
    const sent = JSON.stringify(llm().requests.at(-1)!.body.messages);
    expect(sent).toContain('Background job job-1 (`sleep 2.5; exit 3`) failed with exit code 3.');
    expect(sent).toContain('Background job job-2 (`sleep 2.5; exit 4`) failed with exit code 4.');
  });

  it('the plan agent may list and read its jobs but not kill them (ECA config.clj: the plan agent keeps bg_job)', async () => {
    const { p } = await boot();
    const chatId = await startJob(p, 'echo up; sleep 30', 'sleeper');
    llm().script(
      [{ toolCall: { id: 'l', name: 'patchbay__bg_job', args: { action: 'list' } } }],
      [{ toolCall: { id: 'r', name: 'patchbay__bg_job', args: { action: 'read_output', job_id: 'job-1' } } }],
      [{ toolCall: { id: 'k', name: 'patchbay__bg_job', args: { action: 'kill', job_id: 'job-1' } } }],
      [{ text: 'planned' }],
    );
    await p.request(ECA.chatPrompt, { chatId, message: 'what runs?', agent: 'plan' });
    await p.turnDone(chatId, 2);
    expect(
      llm()
        .requests.at(-4)!
        .body.tools.map((t: { function: { name: string } }) => t.function.name),
    ).toContain('patchbay__bg_job');
    expect(called(p, chatId, 'l').text).toMatch(/^- "sleeper" \(job-1\) \[shell\] running/);
    expect(called(p, chatId, 'r')).toMatchObject({ error: false });
    expect(content(p, chatId, 'toolCallRejected').find((c) => c.id === 'k')).toMatchObject({ reason: 'userConfigDeny' });
    expect((await p.request(ECA.jobsList, {})).result.jobs[0].status).toBe('running');
  });

  it('a flood (one 40 MB line, then 300 000 lines) is kept within 2000 lines and the character budget', async () => {
    const { p } = await boot();
    const flood = `node -e "const s='x'.repeat(1<<20); for (let i=0;i<40;i++) process.stdout.write(s); process.stdout.write('\\n'); for (let i=0;i<300000;i++) console.log('line '+i)"`;
    await startJob(p, flood, 'flood');
    await p.waitFor((m) => m.method === ECA.jobsUpdated.method && m.params.jobs[0]?.status === 'completed', 'the flood to end', 60_000);
    const out = (await p.request(ECA.jobsReadOutput, { jobId: 'job-1' })).result;
    expect(out.lines.length).toBe(2000);
    expect(out.lines.at(-1)).toEqual({ text: 'line 299999', stream: 'stdout' });
    const chars = out.lines.reduce((n: number, l: { text: string }) => n + l.text.length, 0);
    expect(chars).toBeLessThanOrEqual(1_000_000);
  });

  // Linux: the reaper is found through /proc.
  it.runIf(process.platform === 'linux')(
    'a SIGKILLed server leaves no job behind: its reaper stops the whole tree within about 2 s, exits and deletes its ledger record (patchbay chat SIGKILLs as a last resort)',
    async () => {
      const { p, root, home } = await boot();
      // No job, no reaper.
      expect(reaperOf(p.child.pid!)).toBeUndefined();
      await startJob(p, 'node job.cjs');
      const pids = await pidsOf(root);
      const reaper = reaperOf(p.child.pid!);
      expect(reaper).toBeDefined();
      // The grandchild in its own session is found by a scan on the job's first output; the ledger is written within 1.5 s.
      const records = () => (existsSync(join(home, '.patchbay', 'jobs')) ? readdirSync(join(home, '.patchbay', 'jobs')) : []);
      await until(() => records().length === 1, 'the ledger record');
      p.child.kill('SIGKILL');
      await p.exited;
      await until(gone(pids), 'the job tree to be gone', 3_000);
      await until(() => !isAlive(reaper!), 'the reaper to exit');
      await until(() => records().length === 0, 'the record to be deleted');
    },
  );

  for (const how of ['shutdown and exit', 'stdin closed', 'SIGTERM'] as const) {
    it(`the server's end (${how}) stops every job with its whole tree`, async () => {
      const { p, root } = await boot();
      await startJob(p, 'node job.cjs');
      const pids = await pidsOf(root);
      expect(isAlive(pids.ownSession)).toBe(true);
      if (how === 'shutdown and exit') await p.stop();
      else if (how === 'stdin closed') p.child.stdin.end();
      else p.child.kill('SIGTERM');
      await p.exited;
      await until(gone(pids), 'the job tree to be gone', 5_000);
    });
  }
});
