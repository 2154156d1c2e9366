/** `toolCall.approval.insideWorkspace` entries resolved: absolute, `~`, relative to the first workspace folder. */
import { describe, expect, it } from 'vitest';
import { insideWorkspaceFolders, toolRoots } from '../../src/core/tool-calls/inside-workspace.js';

describe('insideWorkspaceFolders', () => {
  it('resolves absolute, ~ and relative entries; drops blanks and duplicates', () => {
    expect(insideWorkspaceFolders(['/srv/lib/', '~', '~/notes', '../sibling', ' ', '/srv/lib'], ['/w/app'], '/home/u')).toEqual(['/srv/lib', '/home/u', '/home/u/notes', '/w/sibling']);
  });

  it('a relative entry without a workspace folder is ignored', () => {
    expect(insideWorkspaceFolders(['rel'], [], '/home/u')).toEqual([]);
  });

  it('the workspace folders stay first and are not repeated', () => {
    expect(toolRoots(['/w/app', '/w/b'], ['/w/b', '/srv/lib'], '/home/u')).toEqual(['/w/app', '/w/b', '/srv/lib']);
    expect(toolRoots(['/w/app'], undefined)).toEqual(['/w/app']);
  });
});
