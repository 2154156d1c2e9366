import { readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OutputBuffer, shellCommandTool } from '../../src/core/tools/native/index.js';
import { context, removeDir, tempDir, text } from './tools-helpers.js';

let ws: string;
beforeEach(async () => {
  ws = await tempDir();
});
afterEach(async () => {
  await removeDir(ws);
});

/**
 * Whether a process is alive (signal 0 only checks). A zombie counts as dead: orphans are
 * reparented to PID 1, which in some containers never reaps them.
 */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc (macOS): signal 0 is all there is
  }
}

async function waitUntil(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return cond();
}

describe.skipIf(process.platform === 'win32')('shell_command', () => {
  const tool = shellCommandTool();

  it('runs in the first root by default, combining stdout and stderr, with the exit code', async () => {
    const r = await tool.call({ command: 'pwd; echo out; echo err >&2' }, context([ws]));
    expect(r.error).toBe(false);
    expect(text(r)).toBe(`${ws}\nout\nerr\n\nExit code: 0`);
  });

  it('runs in working_directory, relative to the first root', async () => {
    await mkdir(join(ws, 'sub'));
    const r = await tool.call({ command: 'pwd', working_directory: 'sub' }, context([ws]));
    expect(text(r)).toBe(`${join(ws, 'sub')}\n\nExit code: 0`);
  });

  it('reports a non-zero exit code as an error result', async () => {
    const r = await tool.call({ command: 'echo failing; exit 3' }, context([ws]));
    expect(r.error).toBe(true);
    expect(text(r)).toBe('failing\n\nExit code: 3');
  });

  it('says when there is no output, and really mutates the workspace', async () => {
    const r = await tool.call({ command: 'printf hi > made.txt' }, context([ws]));
    expect(text(r)).toBe('(no output)\n\nExit code: 0');
    expect(await readFile(join(ws, 'made.txt'), 'utf8')).toBe('hi');
  });

  it('errors for a missing working_directory', async () => {
    const r = await tool.call({ command: 'true', working_directory: 'nope' }, context([ws]));
    expect(r.error).toBe(true);
    expect(text(r)).toContain(join(ws, 'nope'));
  });

  it('kills the whole process group on timeout, within about a second of it', async () => {
    const pidFile = join(ws, 'pid');
    const started = Date.now();
    const r = await tool.call({ command: `sleep 30 & echo $! > ${pidFile}; echo started; wait`, timeout: 1 }, context([ws]));
    const elapsed = Date.now() - started;
    expect(r.error).toBe(true);
    expect(text(r)).toContain('started');
    expect(text(r)).toMatch(/\[patchbay: timed out after 1 s; the command and its processes were killed\]/);
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(2500);
    const sleeper = Number((await readFile(pidFile, 'utf8')).trim());
    expect(await waitUntil(() => !alive(sleeper), 1000)).toBe(true);
  });

  it('escalates to SIGKILL for processes that ignore SIGTERM', async () => {
    const started = Date.now();
    const r = await tool.call({ command: "trap '' TERM; sleep 30; echo survived", timeout: 0.5 }, context([ws]));
    const elapsed = Date.now() - started;
    expect(r.error).toBe(true);
    expect(text(r)).not.toContain('survived');
    expect(text(r)).toMatch(/timed out after 0.5 s/);
    expect(elapsed).toBeLessThan(2000);
  });

  it('uses the configured default timeout', async () => {
    const quick = shellCommandTool({ shellTimeoutSeconds: 0.3 });
    const started = Date.now();
    const r = await quick.call({ command: 'sleep 30' }, context([ws]));
    expect(text(r)).toMatch(/timed out after 0.3 s/);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('kills the command when the signal is aborted', async () => {
    const ac = new AbortController();
    const pidFile = join(ws, 'pid');
    const started = Date.now();
    const p = tool.call({ command: `echo $$ > ${pidFile}; sleep 30` }, context([ws], { signal: ac.signal }));
    setTimeout(() => ac.abort(), 300);
    const r = await p;
    expect(Date.now() - started).toBeLessThan(1500);
    expect(r.error).toBe(true);
    expect(text(r)).toMatch(/cancelled; the command and its processes were killed/);
    const shellPid = Number((await readFile(pidFile, 'utf8')).trim());
    expect(await waitUntil(() => !alive(shellPid), 1000)).toBe(true);
  });

  it('stops background processes left behind when the command exits', async () => {
    const pidFile = join(ws, 'pid');
    const r = await tool.call({ command: `sleep 30 > /dev/null 2>&1 & echo $! > ${pidFile}; echo done` }, context([ws]));
    expect(r.error).toBe(false);
    expect(text(r)).toContain('done');
    expect(text(r)).toMatch(/background processes still running when the command exited were stopped/);
    const sleeper = Number((await readFile(pidFile, 'utf8')).trim());
    expect(await waitUntil(() => !alive(sleeper), 1000)).toBe(true);
  });

  it('truncates long output keeping head and tail, saying how much was cut', async () => {
    const small = shellCommandTool({ maxOutputChars: 1000 });
    // 2000 numbered lines of 10 characters each ("line 00001\n" is 11 with the newline).
    const r = await small.call({ command: `i=1; while [ $i -le 2000 ]; do printf 'line %05d\\n' $i; i=$((i+1)); done` }, context([ws]));
    expect(r.error).toBe(false);
    const out = text(r);
    expect(out.startsWith('line 00001\nline 00002\n')).toBe(true);
    expect(out).toContain('line 02000\n\nExit code: 0');
    expect(out).toMatch(/\[patchbay: output truncated: 21000 of 22000 characters cut from the middle; showing the first 500 and the last 500\./);
    expect(out).not.toContain('line 01000');
    expect(out.length).toBeLessThan(1400);
  });

  it('validates arguments and summarises the command', async () => {
    const r = await tool.call({ command: 'echo x', timeout: -1 }, context([ws]));
    expect(r.error).toBe(true);
    expect(text(r)).toMatch(/timeout/);
    expect(tool.summary!({ command: 'npm test' })).toBe('Running "npm test"');
    expect(tool.summary!({ command: `echo a\necho ${'b'.repeat(100)}` })).toBe(`Running "echo a echo ${'b'.repeat(67)}…"`);
    expect(tool.paths!({ command: 'ls', working_directory: '../elsewhere' })).toEqual(['../elsewhere']);
    expect(tool.paths!({ command: 'ls' })).toEqual([]);
  });
});

describe('OutputBuffer', () => {
  it('keeps everything under the budget', () => {
    const b = new OutputBuffer(10);
    b.push('abc');
    b.push('defg');
    expect(b.text()).toBe('abcdefg');
  });

  it('keeps exactly the first and last halves over it, across many chunks', () => {
    const b = new OutputBuffer(10);
    for (const ch of 'abcdefghijklmnopqrstuvwxyz') b.push(ch);
    const out = b.text();
    expect(out.startsWith('abcde\n\n')).toBe(true);
    expect(out.endsWith('\n\nvwxyz')).toBe(true);
    expect(out).toContain('16 of 26 characters cut');
  });
});
