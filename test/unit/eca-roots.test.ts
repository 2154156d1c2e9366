// workspace/didChangeWorkspaceFolders params to paths (src/server/eca/eca-roots.ts). eca-emacs sends
// `file://` + the raw path (eca-util.el `eca--path-to-uri`); other editors send encoded URLs.
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { rootsRequest } from '../../src/server/eca/eca-roots.js';

const event = (added: string[], removed: string[] = []) => ({ event: { added: added.map((uri) => ({ uri, name: 'x' })), removed: removed.map((uri) => ({ uri, name: 'x' })) } });

describe('rootsRequest', () => {
  it('a raw `#` or `?` in an eca-emacs URI is part of the path, not cut off as fragment or query', () => {
    const warnings: string[] = [];
    const req = rootsRequest(event(['file:///home/me/issue#12', 'file:///home/me/what?now'], ['file:///home/me/a b#c']), (m) => warnings.push(m));
    expect(req).toEqual({ added: ['/home/me/issue#12', '/home/me/what?now'], removed: ['/home/me/a b#c'] });
    expect(warnings).toEqual([]);
  });

  it('encoded URIs (VS Code, the desktop app) are decoded; plain eca-emacs ones are taken as they are', () => {
    const encoded = pathToFileURL('/home/me/my project#2').href;
    expect(encoded).toContain('%23');
    const req = rootsRequest(event([encoded, 'file:///home/me/plain']), () => {});
    expect(req.added).toEqual(['/home/me/my project#2', '/home/me/plain']);
  });

  it('a URI that is no file: URI is skipped with a warning', () => {
    const warnings: string[] = [];
    expect(rootsRequest(event(['https://example.com/repo']), (m) => warnings.push(m)).added).toEqual([]);
    expect(warnings).toEqual(['workspace/didChangeWorkspaceFolders: cannot add "https://example.com/repo": not a file: URI; ignored']);
  });
});
