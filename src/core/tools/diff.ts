/** ECA `FileChangeDetails` for a file going from `before` to `after`, shown by editors as a diff. */
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch } from 'diff';
import type { FileChangeDetails } from '../../shapes/tool.js';

/** `path` should be absolute; `before` is `''` for a new file. */
export function fileChange(path: string, before: string, after: string): FileChangeDetails {
  const patch = structuredPatch(path, path, before, after, undefined, undefined, { context: 3 });
  let linesAdded = 0;
  let linesRemoved = 0;
  for (const hunk of patch.hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith('+')) linesAdded++;
      else if (line.startsWith('-')) linesRemoved++;
    }
  }
  const diff = patch.hunks.length ? formatPatch(patch, FILE_HEADERS_ONLY) : '';
  return { type: 'fileChange', path, diff, linesAdded, linesRemoved };
}
