/** Text helpers of inline completion and rewrite: where the cursor is, what the model's answer really is. */

/**
 * The document split at a cursor given as a 0-based line and character (UTF-16 units, as LSP
 * positions): a character past the line's end is its end, a line past the document is its end.
 */
export function splitAt(doc: string, line: number, character: number): { prefix: string; suffix: string } {
  let start = 0;
  for (let l = 0; l < line; l++) {
    const nl = doc.indexOf('\n', start);
    if (nl < 0) return { prefix: doc, suffix: '' };
    start = nl + 1;
  }
  const nl = doc.indexOf('\n', start);
  const lineEnd = nl < 0 ? doc.length : nl > start && doc[nl - 1] === '\r' ? nl - 1 : nl;
  const at = Math.min(start + character, lineEnd);
  return { prefix: doc.slice(0, at), suffix: doc.slice(at) };
}

const WHOLE_FENCE = /^\s*```[^\r\n]*\r?\n([\s\S]*?)\r?\n?```\s*$/;
const WHOLE_TICKS = /^\s*`([\s\S]*?)`\s*$/;
const FIRST_FENCE = /```[^\r\n]*\r?\n([\s\S]*?)\r?\n?```/;

/**
 * The code in a model's answer: chat models wrap code in Markdown fences though told not to. The
 * same order as ECA's `normalize-code-result` (eca src/eca/shared.clj): the whole answer fenced,
 * then in single backticks, then the first fenced block anywhere; else the answer as it is.
 */
export function codeOf(answer: string): string {
  const m = WHOLE_FENCE.exec(answer) ?? WHOLE_TICKS.exec(answer) ?? FIRST_FENCE.exec(answer);
  return m ? m[1].trim() : answer;
}

/**
 * A file's text for the rewrite prompt: whole up to `maxLines` lines, else `maxLines` lines around
 * `line` (1-based, the selection's start) with a first line saying which ones.
 */
export function fileWindow(content: string, line: number, maxLines: number): string {
  const lines = content.split(/\r?\n/);
  if (lines.length <= maxLines) return content;
  const first = Math.max(1, Math.min(lines.length - maxLines + 1, line - Math.floor(maxLines / 2)));
  const last = first + maxLines - 1;
  return `[file truncated: lines ${first}-${last} of ${lines.length}]\n${lines.slice(first - 1, last).join('\n')}`;
}
