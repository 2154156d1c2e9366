/**
 * Fuzzy path matching for @-mentions: the query must be a case-insensitive subsequence of the
 * path. Scoring follows the fzf family: every matched character earns points, more when it
 * starts a segment (`/`, `_`, `-`, `.`, camelCase) or continues a run, and gaps cost. A match
 * inside the basename beats one spread over the directories.
 *
 * Built for a hot loop over 100k paths: no allocation per candidate, one backward and one
 * forward pass over the string.
 */

export const NO_MATCH = -1;

const SCORE_MATCH = 16;
const BONUS_START = 10; // first character of the string, or just after `/`
const BONUS_SEPARATOR = 8; // just after `_`, `-`, `.`, space
const BONUS_CAMEL = 7; // lower→upper or letter→digit
const BONUS_CONSECUTIVE = 5;
const FIRST_CHAR_MULTIPLIER = 2;
const PENALTY_GAP_START = 3;
const PENALTY_GAP_EXTENSION = 1;
const MAX_GAP_PENALTY = 15;
export const BONUS_BASENAME = 24;
export const BONUS_BASENAME_PREFIX = 20;
export const BONUS_BASENAME_EXACT = 60;

const CH_SLASH = 47;
const CH_DOT = 46;

/** Bit set of the characters present: a–z one bit each, digits, `/`, `.`, `_`/`-`, space, other. */
export function charMask(lower: string): number {
  let m = 0;
  for (let i = 0; i < lower.length; i++) {
    const c = lower.charCodeAt(i);
    if (c >= 97 && c <= 122) m |= 1 << (c - 97);
    else if (c >= 48 && c <= 57) m |= 1 << 26;
    else if (c === CH_SLASH) m |= 1 << 27;
    else if (c === CH_DOT) m |= 1 << 28;
    else if (c === 95 || c === 45) m |= 1 << 29;
    else if (c === 32) m |= 1 << 30;
    else m |= 1 << 31;
  }
  return m | 0;
}

/** Bonus for a match at `i` (whose lowercase is already known to match). */
function boundaryBonus(orig: string, lower: string, i: number, from: number): number {
  if (i === from) return BONUS_START;
  const p = lower.charCodeAt(i - 1);
  if (p === CH_SLASH) return BONUS_START;
  if (p === 95 || p === 45 || p === CH_DOT || p === 32) return BONUS_SEPARATOR;
  const c = orig.charCodeAt(i);
  const po = orig.charCodeAt(i - 1);
  if (c >= 65 && c <= 90 && po >= 97 && po <= 122) return BONUS_CAMEL;
  if (c >= 48 && c <= 57 && !(po >= 48 && po <= 57)) return BONUS_CAMEL;
  return 0;
}

let last = new Int32Array(64);

/** The best score `fuzzyScore` can give a query of `m` characters (for pruning). */
export function maxFuzzyScore(m: number): number {
  return m <= 0 ? 0 : SCORE_MATCH + BONUS_START * FIRST_CHAR_MULTIPLIER + (m - 1) * (SCORE_MATCH + BONUS_CONSECUTIVE + BONUS_START);
}

/** The best score `scorePath` can give a query of `m` characters. */
export function maxPathScore(m: number, qHasSlash: boolean): number {
  return maxFuzzyScore(m) + (qHasSlash ? 0 : BONUS_BASENAME + BONUS_BASENAME_PREFIX + BONUS_BASENAME_EXACT);
}

/**
 * Backward pass: the latest position each query character may take with the rest still
 * matching, into `last`. False when `q` is not a subsequence of `lower.slice(stop)`.
 */
function fitsFromEnd(lower: string, stop: number, q: string, m: number): boolean {
  if (m > last.length) last = new Int32Array(m * 2);
  let p = lower.length - 1;
  for (let k = m - 1; k >= 0; k--) {
    const c = q.charCodeAt(k);
    while (p >= stop && lower.charCodeAt(p) !== c) p--;
    if (p < stop) return false;
    last[k] = p--;
  }
  return true;
}

/** Forward pass, after `fitsFromEnd`: earliest match, jumping ahead to a segment start when one is reachable. */
function forwardScore(lower: string, orig: string, from: number, q: string, m: number): number {
  let score = 0;
  let prev = -2;
  let pos = from;
  let runBonus = 0;
  for (let k = 0; k < m; k++) {
    const c = q.charCodeAt(k);
    let j = pos;
    while (lower.charCodeAt(j) !== c) j++;
    let bonus = boundaryBonus(orig, lower, j, from);
    if (j !== prev + 1 && bonus < BONUS_SEPARATOR) {
      const limit = last[k];
      for (let t = j + 1; t <= limit; t++) {
        if (lower.charCodeAt(t) !== c) continue;
        const b = boundaryBonus(orig, lower, t, from);
        if (b >= BONUS_SEPARATOR) {
          j = t;
          bonus = b;
          break;
        }
      }
    }
    let s = SCORE_MATCH;
    if (j === prev + 1) {
      // A run keeps the bonus of the segment start that began it.
      if (bonus > runBonus) runBonus = bonus;
      s += BONUS_CONSECUTIVE + runBonus;
    } else {
      if (k > 0) {
        const pen = PENALTY_GAP_START + (j - prev - 2) * PENALTY_GAP_EXTENSION;
        s -= pen > MAX_GAP_PENALTY ? MAX_GAP_PENALTY : pen;
      }
      runBonus = bonus;
      s += k === 0 ? bonus * FIRST_CHAR_MULTIPLIER : bonus;
    }
    score += s;
    prev = j;
    pos = j + 1;
  }
  return score;
}

/**
 * Score `q` (lowercase) against `lower.slice(from)`; `orig` is the same string with its case,
 * for camelCase boundaries. NO_MATCH when `q` is not a subsequence.
 */
export function fuzzyScore(lower: string, orig: string, from: number, q: string): number {
  const m = q.length;
  if (lower.length - from < m || !fitsFromEnd(lower, from, q, m)) return NO_MATCH;
  return forwardScore(lower, orig, from, q, m);
}

/**
 * Score a workspace-relative path; `base` is where its basename starts. A query without `/`
 * that fits inside the basename is scored there, with bonuses (prefix, exact name); otherwise
 * against the whole path. `mustBeat` lets the caller skip work: when no whole-path match could
 * score above it, only basename matches are considered.
 */
export function scorePath(lower: string, orig: string, base: number, q: string, qHasSlash: boolean, mustBeat = -1): number {
  const m = q.length;
  const maxFuzzy = maxFuzzyScore(m);
  if (!qHasSlash && mustBeat > maxFuzzy + BONUS_BASENAME) {
    // Only a basename prefix can still score high enough; it is one contiguous run from a
    // segment start, so the forward pass needs no backward bounds.
    if (!lower.startsWith(q, base)) return NO_MATCH;
  } else {
    const baseOnly = !qHasSlash && mustBeat > maxFuzzy;
    if (lower.length - (baseOnly ? base : 0) < m) return NO_MATCH;
    if (!fitsFromEnd(lower, baseOnly ? base : 0, q, m)) return NO_MATCH;
    if (qHasSlash || last[0] < base) return forwardScore(lower, orig, 0, q, m);
  }
  let s = forwardScore(lower, orig, base, q, m) + BONUS_BASENAME;
  if (lower.startsWith(q, base)) {
    s += BONUS_BASENAME_PREFIX;
    const end = base + m;
    // `parser` is an exact hit on `parser.ts` as well as on `parser`.
    if (end === lower.length || (lower.charCodeAt(end) === CH_DOT && lower.indexOf('.', end + 1) === -1)) {
      s += BONUS_BASENAME_EXACT;
    }
  }
  return s;
}
