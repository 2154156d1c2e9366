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
 * A file's text for the rewrite prompt: whole up to `maxLines` lines and `maxChars` characters,
 * else a window around the selection (`line` 1-based, `character` on it) with a first line saying
 * what was kept. Lines first (ECA's `fullFileMaxLines`), then characters: a minified one-line file
 * has one line of megabytes, and that is what the model's context cannot hold.
 */
export function fileWindow(content: string, line: number, maxLines: number, maxChars = Infinity, character = 0): string {
  const starts = lineStarts(content);
  const total = starts.length;
  const firstLine = total <= maxLines ? 1 : Math.max(1, Math.min(total - maxLines + 1, line - Math.floor(maxLines / 2)));
  const lastLine = Math.min(total, firstLine + maxLines - 1);
  let from = starts[firstLine - 1];
  let to = lastLine < total ? starts[lastLine] - 1 : content.length;
  if (to - from <= maxChars) {
    if (firstLine === 1 && lastLine === total) return content;
    return `[file truncated: lines ${firstLine}-${lastLine} of ${total}]\n${content.slice(from, to).replace(/\r$/, '')}`;
  }
  // Too many characters: `maxChars` of them centred on the selection, inside the line window,
  // cut at line ends when the window has any, never inside a surrogate pair.
  const lineIdx = Math.min(Math.max(line, firstLine), lastLine) - 1;
  const lineEnd = lineIdx + 1 < total ? starts[lineIdx + 1] - 1 : content.length;
  const at = Math.min(starts[lineIdx] + Math.max(0, character), lineEnd);
  let s = Math.max(from, at - Math.floor(maxChars / 2));
  const e = Math.min(to, s + maxChars);
  s = Math.max(from, e - maxChars);
  const nlAfterStart = content.indexOf('\n', s);
  const nlBeforeEnd = content.lastIndexOf('\n', e - 1);
  if (s > from && nlAfterStart >= 0 && nlAfterStart < at) s = nlAfterStart + 1;
  to = e < to && nlBeforeEnd >= at ? nlBeforeEnd : e;
  from = s;
  if (from > 0 && isLowSurrogate(content.charCodeAt(from))) from++;
  if (to < content.length && isHighSurrogate(content.charCodeAt(to - 1))) to--;
  const a = lineOf(starts, from);
  const b = lineOf(starts, Math.max(from, to - 1));
  return `[file truncated: lines ${a}-${b} of ${total}, ${to - from} of ${content.length} characters]\n${content.slice(from, to)}`;
}

/** Offsets where each line starts (line n, 1-based, at index n-1). */
function lineStarts(content: string): number[] {
  const starts = [0];
  for (let i = content.indexOf('\n'); i >= 0; i = content.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/** The 1-based line holding offset `at`. */
function lineOf(starts: number[], at: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= at) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

/**
 * The last `max` characters of the text before the cursor, starting at a line start when the cut
 * falls inside the text (a model completes better from whole lines); never inside a surrogate pair.
 */
export function tailOf(prefix: string, max: number): string {
  if (prefix.length <= max) return prefix;
  let cut = prefix.length - max;
  const nl = prefix.indexOf('\n', cut);
  if (nl >= 0 && nl < prefix.length - 1) cut = nl + 1;
  else if (isLowSurrogate(prefix.charCodeAt(cut))) cut++;
  return prefix.slice(cut);
}

/** The first `max` characters of the text after the cursor, ending at a line end when there is one. */
export function headOf(suffix: string, max: number): string {
  if (suffix.length <= max) return suffix;
  let cut = max;
  const nl = suffix.lastIndexOf('\n', cut - 1);
  if (nl > 0) cut = nl + 1;
  else if (isHighSurrogate(suffix.charCodeAt(cut - 1))) cut--;
  return suffix.slice(0, cut);
}
