/**
 * The listeners a server opens (gateway, OpenCtx host) and the files that say where they are:
 * opened once however often the editor says `initialized`, and never removed from under a
 * second server sharing the same PATCHBAY_HOME.
 */
import { existsSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EcaProc, tempDir, workspace } from './harness.js';

const procs: EcaProc[] = [];
afterEach(async () => {
  await Promise.all(procs.splice(0).map((p) => p.stop()));
});

function start(home: string): EcaProc {
  const p = new EcaProc({ home });
  procs.push(p);
  return p;
}

async function waitUntil(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const read = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').trim() : undefined);

/** TCP sockets in LISTEN state held by `pid` (Linux /proc). */
function listeningSockets(pid: number): number {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      /* closed meanwhile */
    }
  }
  let n = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // st 0A is LISTEN; column 9 is the inode.
      if (cols[3] === '0A' && inodes.has(cols[9])) n++;
    }
  }
  return n;
}

describe.skipIf(process.platform !== 'linux')('listeners and their files', () => {
  it('a repeated initialized opens no more listening sockets', async () => {
    const home = tempDir();
    const p = start(home);
    await p.initialize(workspace());
    await waitUntil('both listeners', () => existsSync(join(home, '.patchbay', 'gateway', 'address')) && existsSync(join(home, '.patchbay', 'openctx', 'address')));
    const before = listeningSockets(p.child.pid!);
    expect(before).toBe(2);
    const gateway = read(join(home, '.patchbay', 'gateway', 'address'));
    for (let i = 0; i < 5; i++) p.notify('initialized', {});
    // A request answered after the notifications: they have all been handled.
    await p.request('chat/list', {});
    await new Promise((r) => setTimeout(r, 300));
    expect(listeningSockets(p.child.pid!)).toBe(before);
    expect(read(join(home, '.patchbay', 'gateway', 'address'))).toBe(gateway);
    expect(read(join(home, '.patchbay', 'logs', 'server.log'))).toMatch(/ignoring a repeated "initialized"/);
  });

  it('the first of two servers on one home leaves the second one’s OpenCtx token in place', async () => {
    const home = tempDir();
    const tokenFile = join(home, '.patchbay', 'openctx', 'token');
    const addressFile = join(home, '.patchbay', 'openctx', 'address');
    const a = start(home);
    await a.initialize(workspace());
    await waitUntil('the first token', () => existsSync(tokenFile));
    const first = read(addressFile);
    const b = start(home);
    await b.initialize(workspace());
    await waitUntil('the second server’s address', () => read(addressFile) !== undefined && read(addressFile) !== first);
    const token = read(tokenFile)!;
    const address = read(addressFile)!;

    await a.request('shutdown', {});
    a.notify('exit', {});
    await a.exited;

    expect(read(tokenFile)).toBe(token);
    expect(read(addressFile)).toBe(address);
    // And the second server still serves with it.
    const res = await fetch(`${address}/providers/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ method: 'meta', params: {}, settings: {} }),
    });
    expect(res.status).toBe(200);

    await b.request('shutdown', {});
    b.notify('exit', {});
    await b.exited;
    // The last one out removes its own files.
    expect(existsSync(tokenFile)).toBe(false);
    expect(existsSync(addressFile)).toBe(false);
  });
});
