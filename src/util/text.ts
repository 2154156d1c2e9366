/**
 * Text from outside (a config file, a paste, a tool's output) as a terminal or a message may show
 * it: without the control characters that move the cursor, erase lines or start escape sequences
 * (C0 including ESC and CR, DEL, C1 including CSI). The one sanitizer for every such place.
 */

/** C0 (but tab and line feed, handled by the options), DEL, C1. */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
const CONTROL_ALL = /[\x00-\x1f\x7f-\x9f]/g;
/** Characters that change how the rest of a line displays: bidi overrides/isolates/marks, line/paragraph separators. */
const INVISIBLE_FORMAT = /[\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

export interface ControlCharOptions {
  /** Keep `\n` (and `\t`): for multi-line text such as a paste. Default: both are dropped. */
  keepNewlines?: boolean;
}

/** `s` without control characters (see the module comment). */
export function withoutControlChars(s: string, opts: ControlCharOptions = {}): string {
  return s.replace(opts.keepNewlines ? CONTROL : CONTROL_ALL, '');
}

/** `s` with control and bidi characters written as `\uXXXX` escapes: shown, so nothing is silently dropped. */
export function escapeControlChars(s: string): string {
  return s.replace(CONTROL_ALL, hex).replace(INVISIBLE_FORMAT, hex);
}

function hex(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** `s` cut to `max` characters, saying how much was cut (`npx foo… (12 more characters)`): never hides a cut. */
export function shorten(s: string, max: number): string {
  if (s.length <= max) return s;
  const rest = s.length - max;
  return `${s.slice(0, max)}… (${rest} more character${rest === 1 ? '' : 's'})`;
}
