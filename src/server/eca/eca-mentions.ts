/**
 * `@/abs/path`, `@./rel/path`, `@../x` and `@~/x` written in a prompt's text are contexts too, as the
 * ECA server reads them (eca `src/eca/features/context.clj` `contexts-str-from-prompt`: the pattern
 * `@([/~.][^\s:]+)(?::L(\d+)-L(\d+))?`, a directory when the path is one). eca-nvim sends every
 * `@file` this way. Only what the user typed in the front end is read: text a tool provider injects
 * never goes through here.
 */
import { statSync } from 'node:fs';
import type { ChatContext } from '../../protocol/eca/context.js';
import { resolvePath } from '../../util/paths.js';

const MENTION = /(?:^|(?<=\s|\())@([/~.][^\s:)]+)(?::L(\d+)-L(\d+))?/g;

export function mentionedContexts(message: string, roots: string[]): ChatContext[] {
  const out: ChatContext[] = [];
  for (const m of message.matchAll(MENTION)) {
    const [, raw, start, end] = m;
    // "see @./a.ts." or "@~/notes.md;": the sentence's punctuation is not part of the path when
    // the path without it exists and the path with it does not (ECA's pattern keeps it).
    const trimmed = raw.replace(/[.,;!?'"\]}>]+$/, '');
    const path = trimmed !== raw && trimmed && !kind(raw, roots) && kind(trimmed, roots) ? trimmed : raw;
    const isDir = kind(path, roots) === 'directory';
    if (isDir) out.push({ type: 'directory', path });
    else out.push({ type: 'file', path, ...(start && end ? { linesRange: { start: Number(start), end: Number(end) } } : {}) });
  }
  return out;
}

/** What a mentioned path is; undefined when missing or unreadable (then rendered as a file context, which reports why it was skipped). */
function kind(path: string, roots: string[]): 'file' | 'directory' | undefined {
  try {
    return statSync(resolvePath(path, roots)).isDirectory() ? 'directory' : 'file';
  } catch {
    return undefined;
  }
}

/** The prompt's own contexts plus those its text names, each once (by type, path and lines). */
export function withMentions(contexts: ChatContext[], message: string, roots: string[]): ChatContext[] {
  const key = (c: ChatContext) => JSON.stringify([c.type, 'path' in c ? resolvePath(c.path, roots) : '', 'linesRange' in c ? c.linesRange : undefined]);
  const seen = new Set(contexts.map(key));
  const added = mentionedContexts(message, roots).filter((c) => !seen.has(key(c)) && (seen.add(key(c)), true));
  return [...contexts, ...added];
}
