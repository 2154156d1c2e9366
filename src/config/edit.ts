/**
 * Changes to a config file that keep what the user wrote: comments, key order, indentation and
 * line endings. jsonc-parser's `modify` computes the smallest text edits for one key (the way VS
 * Code edits settings.json); we apply them one key at a time and write the result atomically.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { applyEdits, format, modify, type Edit, type FormattingOptions } from 'jsonc-parser';
import { parseJsonc } from './jsonc.js';

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
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw new Error(`${path} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
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
 * a file. The file keeps its mode (a config holding keys may be 0600).
 */
export function writeAtomically(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  let mode: number | undefined;
  try {
    mode = statSync(path).mode & 0o7777;
  } catch {
    /* a new file: the umask decides */
  }
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, text, mode === undefined ? {} : { mode });
  // writeFileSync's mode is filtered by the umask: set it exactly.
  if (mode !== undefined) chmodSync(tmp, mode);
  renameSync(tmp, path);
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
  if (lineEnd < 0 || !/^[ \t]*\/\/[^\n]*$/.test(text.slice(edit.offset, lineEnd))) return undefined;
  const lineStart = text.lastIndexOf('\n', edit.offset - 1) + 1;
  const indent = /^[ \t]*/.exec(text.slice(lineStart))?.[0] ?? '';
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
