/**
 * util/file-lock.ts: the lock between patchbay processes sharing one home. Each test makes the
 * situation the final review found (a dead holder, a takeover, racing takeovers, an exit
 * mid-work) with real files and real processes.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildSync } from 'esbuild';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireFileLock, takeOverStale, withFileLock } from '../../src/util/file-lock.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function dir(): string {
  const d = mkdtempSync(join(tmpdir(), 'pb-lock-'));
  dirs.push(d);
  return d;
}

/** The pid of a process that has exited (and been reaped). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', '0']);
  return r.pid!;
}

function tokenOf(file: string): string {
  return readFileSync(file, 'utf8').split('\n')[0]!;
}

describe('file locks between patchbay processes', () => {
  it('takes over at once a lock whose holder pid is dead on this host, however young', async () => {
    const file = join(dir(), 'login-x.lock');
    writeFileSync(file, `deadbeef\n${deadPid()}\n${hostname()}\n`);
    // Age alone would make this wait a minute and give up after 300 ms.
    const release = await acquireFileLock(file, { staleMs: 60_000, waitMs: 300 });
    expect(tokenOf(file)).not.toBe('deadbeef');
    release();
    expect(existsSync(file)).toBe(false);
  });

  it('waits for a live holder and gives up after waitMs', async () => {
    const file = join(dir(), 'login-y.lock');
    writeFileSync(file, `cafe\n${process.pid}\n${hostname()}\n`);
    await expect(acquireFileLock(file, { staleMs: 60_000, waitMs: 200 })).rejects.toThrow(/holds/);
    expect(tokenOf(file)).toBe('cafe');
  });

  it('a holder taken over as stale does not delete the new holder’s lock', async () => {
    const file = join(dir(), 'index.lock');
    const first = await acquireFileLock(file, { staleMs: 1_000, waitMs: 100 });
    const old = new Date(Date.now() - 10_000);
    utimesSync(file, old, old);
    const second = await acquireFileLock(file, { staleMs: 1_000, waitMs: 100 });
    const theirs = tokenOf(file);
    first();
    expect(existsSync(file)).toBe(true);
    expect(tokenOf(file)).toBe(theirs);
    second();
    expect(existsSync(file)).toBe(false);
  });

  it('of two waiters that both saw the same stale lock, only one ends up holding it', async () => {
    const file = join(dir(), 'race.lock');
    const stale = `0badc0de\n${deadPid()}\n${hostname()}\n`;
    writeFileSync(file, stale);
    // Waiter 1 takes over; waiter 2, which read the same stale content before, takes over late.
    const one = await acquireFileLock(file, { staleMs: 60_000, waitMs: 100 });
    const winner = tokenOf(file);
    takeOverStale(file, stale);
    expect(existsSync(file)).toBe(true);
    expect(tokenOf(file)).toBe(winner);
    // Waiter 2 then finds a live holder.
    await expect(acquireFileLock(file, { staleMs: 60_000, waitMs: 100 })).rejects.toThrow(/holds/);
    one();
  });

  it('removes only its own lock after the work, also when the work throws', async () => {
    const file = join(dir(), 'w.lock');
    await expect(withFileLock(file, { staleMs: 1_000, waitMs: 100 }, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(existsSync(file)).toBe(false);
  });

  it('a stop cancels the wait for a lock', async () => {
    const file = join(dir(), 'wait.lock');
    writeFileSync(file, `cafe\n${process.pid}\n${hostname()}\n`);
    const ac = new AbortController();
    const waiting = acquireFileLock(file, { staleMs: 60_000, waitMs: 60_000, signal: ac.signal });
    setTimeout(() => ac.abort(new Error('stopped')), 50);
    await expect(waiting).rejects.toThrow('stopped');
  });

  it('a process that exits while holding a lock removes it on the way out', async () => {
    const d = dir();
    const lib = join(d, 'file-lock.mjs');
    buildSync({ entryPoints: [resolve(__dirname, '../../src/util/file-lock.ts')], bundle: true, platform: 'node', format: 'esm', outfile: lib, logLevel: 'silent' });
    const file = join(d, 'held.lock');
    // Takes the lock, says so, and exits the way the server's onExit does: process.exit mid-work.
    const script = `import { withFileLock } from ${JSON.stringify(lib)};
await withFileLock(${JSON.stringify(file)}, { staleMs: 60000, waitMs: 1000 }, async () => {
  process.stdout.write('held\\n');
  await new Promise((r) => setTimeout(r, 200));
  process.exit(0);
});`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    expect(out).toBe('held\n');
    expect(code).toBe(0);
    expect(existsSync(file)).toBe(false);
  });
});
