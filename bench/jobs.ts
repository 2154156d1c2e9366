/**
 * Background jobs under a flood (issue 17, point 5): the real `patchbay server` over stdio runs
 * two background jobs the fake LLM starts, one printing short lines as fast as the pipe takes
 * them (`yes`), one printing a single line that never ends (`tr` over /dev/zero), for FLOOD_MS.
 * Figure: the server's peak VmRSS over its idle VmRSS in the same run. Target: the growth stays
 * within JOBS_TARGET_MB (the ring keeps 2000 lines / 1M characters per job, a line is cut at
 * 8192 characters), however much the jobs print.
 */
import { FakeLlm } from '../test/fixtures/fake-llm.js';
import { fakeConfig, procMemKb, Server, sleep, tempDir } from './util.js';

const FLOOD_MS = Number(process.env.BENCH_JOBS_FLOOD_MS ?? 8000);
export const JOBS_TARGET_MB = 64;

export interface JobsFloodRun {
  idleKb: number;
  peakKb: number;
  growthKb: number;
  /** What `jobs/readOutput` held at the end, per job: lines and characters. */
  held: Array<{ lines: number; chars: number }>;
}

export async function runJobsFlood(log: (s: string) => void = console.log): Promise<JobsFloodRun> {
  log(`jobs: two background jobs flooding the server for ${FLOOD_MS} ms (short lines, one endless line)…`);
  const fake = await FakeLlm.start();
  const s = new Server({ home: tempDir('pb-bench-jobs-'), config: { ...fakeConfig(fake.url), toolCall: { approval: { byDefault: 'allow' } } } });
  try {
    await s.handshake(tempDir('pb-bench-jobs-ws-'));
    await sleep(1000);
    const idleKb = procMemKb(s.pid).rss;
    fake.script(
      [{ toolCall: { id: 'a', name: 'patchbay__shell_command', args: { command: 'yes "a line of job output, again and again"', background: 'lines' } } }],
      [{ toolCall: { id: 'b', name: 'patchbay__shell_command', args: { command: "tr '\\0' x < /dev/zero", background: 'one line' } } }],
      [{ text: 'started' }],
    );
    const finished = s.waitFor((m) => m.method === 'chat/contentReceived' && m.params?.content?.type === 'progress' && m.params.content.state === 'finished', 'the turn to end');
    await s.request('chat/prompt', { message: 'flood' });
    await finished;
    let peakKb = idleKb;
    for (const end = Date.now() + FLOOD_MS; Date.now() < end;) {
      await sleep(250);
      peakKb = Math.max(peakKb, procMemKb(s.pid).rss);
    }
    const held = [];
    for (const jobId of ['job-1', 'job-2']) {
      const out = (await s.request('jobs/readOutput', { jobId })).msg.result as { lines: Array<{ text: string }> };
      held.push({ lines: out.lines.length, chars: out.lines.reduce((n, l) => n + l.text.length, 0) });
      await s.request('jobs/kill', { jobId });
    }
    return { idleKb, peakKb, growthKb: peakKb - idleKb, held };
  } finally {
    await s.stop();
    await fake.close();
  }
}
