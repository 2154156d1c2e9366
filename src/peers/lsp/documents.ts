/**
 * Open documents of one language-server process (specs/lsp-3.0.md "Text Document Synchronization"),
 * and position helpers. LSP positions count UTF-16 code units (the only encoding we offer, so the
 * 3.17 `positionEncodings` capability is not sent); people and LLMs count characters (code points)
 * from 1. JavaScript strings are UTF-16, so string indices are already LSP `character`s.
 */
export interface OpenDocument {
  languageId: string;
  version: number;
  text: string;
}

/** What was sent to one server process: didChange needs the previous version, a restart re-opens them all. */
export class OpenDocuments {
  private readonly docs = new Map<string, OpenDocument>();

  get(uri: string): OpenDocument | undefined {
    return this.docs.get(uri);
  }

  /** Records an open; returns the document to announce. */
  open(uri: string, languageId: string, text: string): OpenDocument {
    const doc = { languageId, version: 1, text };
    this.docs.set(uri, doc);
    return doc;
  }

  /** Records new full text; returns the new version, or undefined when the text did not change. */
  change(uri: string, text: string): number | undefined {
    const doc = this.docs.get(uri);
    if (!doc || doc.text === text) return undefined;
    doc.version += 1;
    doc.text = text;
    return doc.version;
  }

  entries(): Array<[string, OpenDocument]> {
    return [...this.docs.entries()];
  }

  clear(): void {
    this.docs.clear();
  }
}

/** Line `line0` (0-based) of a text, without its line terminator; '' past the end. */
export function lineAt(text: string, line0: number): string {
  return text.split(/\r\n|\r|\n/)[line0] ?? '';
}

const WORD = /[\p{L}\p{N}_$]/u;

/**
 * 0-based UTF-16 `character` of the first occurrence of `symbol` on the line, preferring a
 * whole-word match (so `id` is not found inside `valid`); undefined if absent.
 */
export function symbolCharacter(lineText: string, symbol: string): number | undefined {
  if (!symbol) return undefined;
  const escaped = symbol.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const chars = [...symbol];
  const before = WORD.test(chars[0]) ? '(?<![\\p{L}\\p{N}_$])' : '';
  const after = WORD.test(chars[chars.length - 1]) ? '(?![\\p{L}\\p{N}_$])' : '';
  const m = new RegExp(before + escaped + after, 'u').exec(lineText);
  if (m) return m.index;
  const at = lineText.indexOf(symbol);
  return at >= 0 ? at : undefined;
}

/** 1-based column in characters (code points) → 0-based UTF-16 `character`; clamped to the line. */
export function columnToUtf16(lineText: string, column1: number): number {
  let units = 0;
  let col = 1;
  for (const ch of lineText) {
    if (col >= column1) break;
    units += ch.length;
    col += 1;
  }
  return units;
}

/** 0-based UTF-16 `character` → 1-based column in characters (code points). */
export function utf16ToColumn(lineText: string, character: number): number {
  let units = 0;
  let col = 1;
  for (const ch of lineText) {
    if (units >= character) break;
    units += ch.length;
    col += 1;
  }
  return col;
}

/**
 * The smallest single edit turning `prev` into `next` (common prefix and suffix kept), as an LSP
 * incremental `TextDocumentContentChangeEvent`: positions in UTF-16 code units, as LSP counts.
 */
export function incrementalChange(prev: string, next: string): { range: { start: { line: number; character: number }; end: { line: number; character: number } }; text: string } {
  let start = 0;
  const max = Math.min(prev.length, next.length);
  while (start < max && prev.charCodeAt(start) === next.charCodeAt(start)) start++;
  // Never split a surrogate pair.
  if (start > 0 && start < prev.length && isLowSurrogate(prev.charCodeAt(start))) start--;
  let endPrev = prev.length;
  let endNext = next.length;
  while (endPrev > start && endNext > start && prev.charCodeAt(endPrev - 1) === next.charCodeAt(endNext - 1)) {
    endPrev--;
    endNext--;
  }
  if (endPrev < prev.length && isLowSurrogate(prev.charCodeAt(endPrev))) {
    endPrev++;
    endNext++;
  }
  return { range: { start: positionAt(prev, start), end: positionAt(prev, endPrev) }, text: next.slice(start, endNext) };
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/** LSP position (0-based line, UTF-16 character) of a UTF-16 offset; `\r\n`, `\n` and `\r` end lines. */
function positionAt(text: string, offset: number): { line: number; character: number } {
  let line = 0;
  let lineStart = 0;
  for (let i = 0; i < offset; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || (c === 13 && text.charCodeAt(i + 1) !== 10)) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, character: offset - lineStart };
}
