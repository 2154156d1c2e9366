/** Text helpers of inline completion and rewrite: where the cursor is, what the model's answer really is. */

/**
 * The document split at a cursor given as a 0-based line and character: a character past the
 * line's end is its end, a line past the document is its end. Characters are code points, as
 * eca-emacs counts them (eca-completion.el: `(- (point) (line-beginning-position))`, Emacs
 * characters), not UTF-16 units: an emoji is one character, and a pair is never split.
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
  let at = start;
  for (let n = 0; n < character && at < lineEnd; n++) at += isHighSurrogate(doc.charCodeAt(at)) && at + 1 < lineEnd && isLowSurrogate(doc.charCodeAt(at + 1)) ? 2 : 1;
  return { prefix: doc.slice(0, at), suffix: doc.slice(at) };
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

const WHOLE_FENCE = /^\s*```[^\r\n]*\r?\n([\s\S]*?)\r?\n?```\s*$/;
const WHOLE_TICKS = /^\s*`([\s\S]*?)`\s*$/;

/**
 * The code in a model's answer: chat models wrap code in Markdown fences though told not to. The
 * same order as ECA's `normalize-code-result` (eca src/eca/shared.clj): the whole answer fenced,
 * then in single backticks, then the first fenced block anywhere; else the answer as it is.
 */
export function codeOf(answer: string): string {
  const m = WHOLE_FENCE.exec(answer) ?? WHOLE_TICKS.exec(answer);
  if (m) return m[1].trim();
  return firstFenced(answer)?.trim() ?? answer;
}

/**
 * The body of the first fenced block: an opening "```" with the rest of its line (the language),
 * then everything up to the next "```". A scan with indexOf, linear in the answer: the regex
 * this replaces tried every "```" as an opener and ran to the end from each (160 KB of "```a"
 * blocked the event loop for seconds). The two whole-answer patterns above are anchored, so linear.
 */
function firstFenced(s: string): string | undefined {
  let from = 0;
  let nl = -1;
  for (;;) {
    const open = s.indexOf('```', from);
    if (open < 0) return undefined;
    // The opener's line must end with \n or \r\n; the next \n is found once per line, not per opener.
    if (nl < open + 3) nl = s.indexOf('\n', open + 3);
    if (nl < 0) return undefined;
    const cr = s.indexOf('\r', open + 3);
    if (cr >= 0 && cr < nl - 1) {
      // A lone \r ends the line with no \n: no opener before it can start a block.
      from = cr + 1;
      continue;
    }
    const close = s.indexOf('```', nl + 1);
    return close < 0 ? undefined : s.slice(nl + 1, close);
  }
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
