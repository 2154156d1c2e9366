/**
 * `workspace/didChangeWorkspaceFolders` (lifecycle.ts names who sends it and what ECA does with
 * it): folder URIs become paths for the runtime, which applies what makes sense and warns about
 * the rest. A URI that is no `file:` URI is skipped with a warning: a workspace folder is a
 * directory on this machine.
 */
import { fileURLToPath } from 'node:url';
import type { DidChangeWorkspaceFoldersParams } from '../../protocol/eca/lifecycle.js';
import type { RootsRequest } from '../../runtime/roots.js';
import { errorMessage } from '../../util/log.js';

/**
 * eca-emacs builds a folder's URI as `file://` + the path, not percent-encoded (eca-util.el
 * `eca--path-to-uri`): a `#` or `?` in it is part of the path, not a fragment or query, and the
 * rest of the string is taken as it is. Other URIs are read as URLs (`%20` is a space).
 */
function folderPath(uri: string): string {
  const raw = /^file:\/\/(?:localhost)?(\/[^#?]*[#?].*)$/i.exec(uri);
  return raw ? raw[1] : fileURLToPath(uri);
}

export function rootsRequest(p: DidChangeWorkspaceFoldersParams, warn: (message: string) => void): RootsRequest {
  const paths = (folders: Array<{ uri: string }>, what: string): string[] =>
    folders.flatMap(({ uri }) => {
      if (!uri.startsWith('file:')) {
        warn(`workspace/didChangeWorkspaceFolders: cannot ${what} ${JSON.stringify(uri)}: not a file: URI; ignored`);
        return [];
      }
      try {
        return [folderPath(uri)];
      } catch (e) {
        warn(`workspace/didChangeWorkspaceFolders: cannot ${what} ${JSON.stringify(uri)}: ${errorMessage(e)}; ignored`);
        return [];
      }
    });
  return { added: paths(p.event.added, 'add'), removed: paths(p.event.removed, 'remove') };
}
