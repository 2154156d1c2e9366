/**
 * Changes to a config file that keep what the user wrote: comments, key order, indentation and
 * line endings. jsonc-parser's `modify` computes the smallest text edits for one key (the way VS
 * Code edits settings.json); we apply them one key at a time and write the result atomically.
 */
import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, realpathSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { applyEdits, findNodeAtLocation, format, modify, parseTree, type Edit, type FormattingOptions } from 'jsonc-parser';
import { parseJsonc } from './jsonc.js';
import { readConfigText } from './config-file.js';

/** One key to set (`value`) or delete (`value: undefined`). */
export interface KeyEdit {
  path: string[];
  value: unknown;
}

/** The file's text before and after, and its parsed value after. */
export interface FileEdit {
  before: string;
  after: string;
}

/** Reads a config file for editing: '' when it does not exist; throws when it is not JSON(C). */
export function readForEdit(path: string): string {
  const read = readConfigText(path);
  if (read.kind === 'missing') return '';
  // Not a regular file, or over the cap: not read, and not written over either.
  if (read.kind === 'refused') throw new Error(`${path} ${read.message.replace(/; ignored$/, '')}`);
  const { text } = read;
  // Editing a file we cannot parse could garble it further: the user fixes it first.
  if (text.trim() !== '') {
    const parsed = parseJsonc(text);
    if (!parsed.ok) throw new Error(`${path} is not valid JSON (${parsed.message}); fix it first`);
    if (parsed.value === null || typeof parsed.value !== 'object' || Array.isArray(parsed.value)) throw new Error(`${path} does not hold a JSON object; fix it first`);
  }
  return text;
}

/** Applies the edits to the text as jsonc-parser would, in the file's own indentation. */
export function editText(text: string, edits: KeyEdit[]): string {
  const formattingOptions = formattingOf(text);
  let out = text;
  for (const e of edits) {
    if (e.value === undefined) {
      const removal = deletion(out, e.path);
      if (removal) {
        out = applyEdits(out, removal);
        continue;
      }
    }
    // modify's own formatting reformats the whole lines an insertion touches (a neighbour written
    // on one line would be spread over several): we format only the text we put in.
    for (const edit of modify(out, e.path, e.value, {})) {
      const split = afterLineComment(out, edit, formattingOptions.eol ?? '\n');
      out = applyEdits(out, split ? split.edits : [edit]);
      const added = split ? split.added : edit;
      if (!added.content) continue;
      out = applyEdits(out, format(out, { offset: added.offset, length: added.content.length }, { ...formattingOptions, keepLines: false }));
    }
  }
  // A file we create ends with a newline, as editors save them.
  if (text === '' && !out.endsWith('\n')) out += formattingOptions.eol ?? '\n';
  return out;
}

/** Edits the file in place (created, with its folder, when missing); see editText. */
export function editConfigFile(path: string, edits: KeyEdit[]): FileEdit {
  const before = readForEdit(path);
  const after = editText(before, edits);
  writeAtomically(path, after);
  return { before, after };
}

/**
 * Written aside and renamed over the file: a reader (ours, the editor's, a crash) never sees half
 * a file. The file keeps its mode (a config holding keys may be 0600); a new one is 0600 in a
 * 0700 folder, as it may hold headers or a client secret. A symlinked config stays a symlink: its
 * target is what gets replaced. A file without write permission is refused, not replaced.
 */
export function writeAtomically(path: string, text: string): void {
  let target = path;
  let mode = 0o600;
  try {
    target = realpathSync(path);
    const st = statSync(target);
    if ((st.mode & 0o222) === 0) throw new Error(`${path} is read-only (mode ${(st.mode & 0o777).toString(8)}): patchbay does not change it; make it writable first`);
    mode = st.mode & 0o7777;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  }
  const tmp = `${target}.${process.pid}.${Date.now()}.tmp`;
  let renamed = false;
  try {
    // wx: never through a file (or link) someone put there.
    const fd = openSync(tmp, 'wx', mode);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    // The mode given to open is filtered by the umask: set it exactly.
    chmodSync(tmp, mode);
    renameSync(tmp, target);
    renamed = true;
  } finally {
    if (!renamed) {
      try {
        unlinkSync(tmp);
      } catch {
        /* never created */
      }
    }
  }
}

/**
 * Deleting a property as a person would: jsonc-parser's `modify` removes only the property and
 * leaves its line comment to the property that comes next (or takes the neighbour's). Here a
 * property written on lines of its own goes with those lines: the `//` comment lines right above
 * it, and its own trailing `// comment`. The last property takes the comma before it instead (the
 * line that comma is on keeps its comment). Returns undefined for any other layout: `modify` then.
 */
function deletion(text: string, path: string[]): Edit[] | undefined {
  const tree = parseTree(text);
  const prop = tree ? findNodeAtLocation(tree, path)?.parent : undefined;
  const siblings = prop?.parent?.children;
  if (!prop || prop.type !== 'property' || !siblings || siblings.length < 2) return undefined;
  const i = siblings.indexOf(prop);
  const end = prop.offset + prop.length;
  let start = text.lastIndexOf('\n', prop.offset - 1) + 1;
  if (text.slice(start, prop.offset).trim() !== '') return undefined;
  // Its own trailing separator (a last property may have one in JSONC) and line comment.
  const tail = /^[ \t]*,?[ \t]*(\/\/[^\n]*)?\r?(\n|$)/.exec(text.slice(end));
  if (!tail) return undefined;
  const isLast = i === siblings.length - 1;
  if (!isLast && !tail[0].trimStart().startsWith(',')) return undefined;
  // The comment lines right above it speak of it.
  for (;;) {
    const prevStart = text.lastIndexOf('\n', start - 2) + 1;
    if (start === 0 || !/^[ \t]*\/\/[^\n]*\n$/.test(text.slice(prevStart, start))) break;
    start = prevStart;
  }
  const edits: Edit[] = [{ offset: start, length: end + tail[0].length - start, content: '' }];
  if (isLast) {
    const prev = siblings[i - 1]!;
    const comma = text.indexOf(',', prev.offset + prev.length);
    // A comma inside a comment between the two is not the separator: modify does it then.
    if (comma < 0 || comma >= start || text.slice(prev.offset + prev.length, comma).trim() !== '') return undefined;
    edits.unshift({ offset: comma, length: 1, content: '' });
  }
  return edits;
}

/**
 * A property inserted after one whose line ends with a `// comment` would go between the value and
 * its comment (the comment would then seem to speak of the new property): the comma stays there,
 * and the property goes on a line of its own after the comment, indented like its neighbour.
 * Returns the edits and where the property lands in the edited text; undefined for any other edit.
 */
function afterLineComment(text: string, edit: Edit, eol: string): { edits: Edit[]; added: Edit } | undefined {
  if (edit.length !== 0 || !edit.content.startsWith(',')) return undefined;
  const lineEnd = text.indexOf('\n', edit.offset);
  if (lineEnd < 0) return undefined;
  const rest = text.slice(edit.offset, lineEnd);
  const lineStart = text.lastIndexOf('\n', edit.offset - 1) + 1;
  const indent = /^[ \t]*/.exec(text.slice(lineStart))?.[0] ?? '';
  // The neighbour already ends with a (JSONC trailing) comma: the new property, on the next line,
  // keeps that style and ends with one too.
  if (/^[ \t]*,[ \t]*(\/\/[^\n]*)?\r?$/.test(rest)) {
    const content = `${indent}${edit.content.slice(1)},${eol}`;
    return { edits: [{ offset: lineEnd + 1, length: 0, content }], added: { offset: lineEnd + 1, length: 0, content } };
  }
  if (!/^[ \t]*\/\/[^\n]*$/.test(rest)) return undefined;
  const content = `${indent}${edit.content.slice(1)}${eol}`;
  return {
    edits: [
      { offset: edit.offset, length: 0, content: ',' },
      { offset: lineEnd + 1, length: 0, content },
    ],
    // After the comma: one character further on.
    added: { offset: lineEnd + 2, length: 0, content },
  };
}

/** The indentation and line ending the file already uses (2 spaces and \n for a new file). */
function formattingOf(text: string): FormattingOptions {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const indent = /^([ \t]+)\S/m.exec(text)?.[1];
  if (indent?.startsWith('\t')) return { insertSpaces: false, tabSize: 1, eol };
  return { insertSpaces: true, tabSize: indent ? indent.length : 2, eol };
}
