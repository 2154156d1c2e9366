/**
 * A session's folders (src/server/acp/session-roots.ts): checked like `cwd`, `/` and home
 * refused; the workspace folders they make, `cwd` first. And the workspace each session holds
 * (src/server/acp/session-workspaces.ts): one reference each, let go of on a move or a close.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sessionRoots, workspaceFolders } from '../../src/server/acp/session-roots.js';
import { SessionWorkspaces } from '../../src/server/acp/session-workspaces.js';
import type { Workspace } from '../../src/runtime/workspace.js';
import { tempDir, useTempDirs } from '../e2e/harness.js';

const scratch = useTempDirs();

describe('sessionRoots', () => {
  it('resolves cwd and additional directories, dropping repeats and cwd itself', () => {
    const home = scratch(tempDir());
    const p = scratch(tempDir());
    mkdirSync(join(p, 'x'));
    expect(sessionRoots({ cwd: p, additionalDirectories: [join(p, 'x', '..', 'x'), p, join(p, 'x')] }, home)).toEqual({ cwd: p, additional: [join(p, 'x')] });
  });

  it('refuses relative, missing, / and home, naming the field', () => {
    const home = scratch(tempDir());
    const p = scratch(tempDir());
    expect(() => sessionRoots({ cwd: 'rel' }, home)).toThrow(/cwd must be an absolute path/);
    expect(() => sessionRoots({ cwd: join(p, 'nope') }, home)).toThrow(/cwd .* is not a directory/);
    expect(() => sessionRoots({ cwd: '/' }, home)).toThrow(/cwd \/ is the root of the file system/);
    expect(() => sessionRoots({ cwd: p, additionalDirectories: [p, `${home}/.`] }, home)).toThrow(/additionalDirectories\[1\] .* is your home folder/);
  });
});

describe('workspace folders of a session', () => {
  it('keeps cwd first and leaves out folders inside others', () => {
    expect(workspaceFolders([{ cwd: '/p/sub', additional: ['/p', '/p/sub/deep'] }])).toEqual(['/p/sub', '/p']);
    expect(workspaceFolders([{ cwd: '/a', additional: ['/x', '/x/y', '/a/in'] }])).toEqual(['/a', '/x']);
  });
});

/** A pool as the Host is one: a workspace per set of folders (in any order), counted; the last release disposes it. */
function countingPool() {
  const open = new Map<string, { ws: Workspace; refs: number }>();
  const disposed: string[][] = [];
  const key = (roots: string[]) => [...roots].sort().join('|');
  return {
    open,
    disposed,
    pool: {
      acquire: async (roots: string[]) => {
        const e = open.get(key(roots)) ?? { ws: { roots } as unknown as Workspace, refs: 0 };
        e.refs++;
        open.set(key(roots), e);
        return e.ws;
      },
      release: async (ws: Workspace) => {
        for (const [k, e] of open)
          if (e.ws === ws && --e.refs === 0) {
            open.delete(k);
            disposed.push(ws.roots);
          }
      },
    },
  };
}

describe('the workspace each session holds', () => {
  it('shares one per set of folders, moves a session on load, and disposes a workspace with its last session', async () => {
    const { pool, open, disposed } = countingPool();
    const held = new SessionWorkspaces(pool);
    const a1 = await held.hold('a1', { cwd: '/a', additional: [] });
    const a2 = await held.hold('a2', { cwd: '/a', additional: [] });
    const b = await held.hold('b', { cwd: '/b', additional: ['/a'] });
    expect(a1).toBe(a2);
    expect(b).not.toBe(a1);
    expect(held.workspaces()).toEqual([a1, b]);
    expect(held.holders(a1)).toEqual(['a1', 'a2']);
    // Loaded again with the same folders: still one reference.
    expect(await held.hold('a1', { cwd: '/a', additional: [] })).toBe(a1);
    expect(open.get('/a')?.refs).toBe(2);
    // Loaded in other folders: it holds that workspace, and lets go of the one it had.
    expect(await held.hold('a2', { cwd: '/a', additional: ['/b'] })).toBe(b);
    expect(open.get('/a')?.refs).toBe(1);
    expect(held.of('a2')).toBe(b);
    await held.drop('a1');
    expect(disposed).toEqual([['/a']]);
    expect(await held.drop('a1')).toBe(false);
    await held.drop('b');
    expect(disposed).toHaveLength(1);
    await held.drop('a2');
    expect(disposed).toEqual([['/a'], ['/b', '/a']]);
    expect(open.size).toBe(0);
  });

  it('keeps a lobby for requests before any session, and lets it go when a session holds one', async () => {
    const { pool, open, disposed } = countingPool();
    const held = new SessionWorkspaces(pool);
    const lobby = await held.any(() => '/agent');
    expect(await held.any(() => '/elsewhere')).toBe(lobby);
    expect(held.workspaces()).toEqual([lobby]);
    const s = await held.hold('s', { cwd: '/p', additional: [] });
    expect(disposed).toEqual([['/agent']]);
    expect(await held.any(() => '/agent')).toBe(s);
    expect([...open.keys()]).toEqual(['/p']);
  });
});
