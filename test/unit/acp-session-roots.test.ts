/**
 * A session's folders (src/server/acp/session-roots.ts): checked like `cwd`, `/` and home
 * refused; the workspace folders the open sessions need, the first session's `cwd` first.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionRootsLedger, sessionRoots, workspaceFolders } from '../../src/server/acp/session-roots.js';
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

describe('workspace folders of the open sessions', () => {
  it('keeps the first cwd first, leaves out folders inside others, and follows closes', () => {
    expect(workspaceFolders([{ cwd: '/p/sub', additional: ['/p', '/p/sub/deep'] }])).toEqual(['/p/sub', '/p']);
    const l = new SessionRootsLedger();
    l.set('a', { cwd: '/a', additional: ['/x'] });
    l.set('b', { cwd: '/b', additional: ['/x/y', '/a/in'] });
    expect(l.wanted()).toEqual(['/a', '/x', '/b']);
    expect(l.change(['/a', '/old'])).toEqual({ added: ['/x', '/b'], removed: ['/old'] });
    l.delete('a');
    expect(l.change(['/a', '/x', '/b'])).toEqual({ added: ['/x/y', '/a/in'], removed: ['/a', '/x'] });
    l.delete('b');
    // No session open: the folders stay until the next session's replace them.
    expect(l.change(['/b'])).toEqual({ added: [], removed: [] });
  });
});
