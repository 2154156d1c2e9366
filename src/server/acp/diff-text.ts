/**
 * A file change as ACP diffs. Core keeps a change as a unified diff (shapes/tool.ts
 * `FileChangeDetails`, stored with the chat); ACP wants the text before and after. Each hunk
 * becomes one diff of its own lines (context and removed lines before, context and added lines
 * after), which is also what can be rebuilt for a stored chat's replay. A hunk that starts from
 * nothing (`-0,0`) is a new file: its `oldText` is null.
 *
 * The texts are the file's own: every line keeps its line break, but the last line of a side
 * the diff marks `\ No newline at end of file`. So a new file's `newText` is its whole content,
 * final newline included, and a client that applies or compares the texts sees no spurious
 * change at the end.
 */
import type { ToolCallContent } from '@agentclientprotocol/sdk';

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@/;

export function diffContents(path: string, unified: string): ToolCallContent[] {
  const out: ToolCallContent[] = [];
  let hunk: { oldText: string; newText: string; created: boolean } | undefined;
  /** The sides the previous line went to: a `\ No newline` marker takes back their line break. */
  let last: { old: boolean; new: boolean } = { old: false, new: false };
  const flush = () => {
    if (hunk) out.push({ type: 'diff', path, oldText: hunk.created ? null : hunk.oldText, newText: hunk.newText });
  };
  for (const line of unified.split('\n')) {
    const head = HUNK.exec(line);
    if (head) {
      flush();
      hunk = { oldText: '', newText: '', created: head[1] === '0' && head[2] === '0' };
      last = { old: false, new: false };
      continue;
    }
    if (!hunk) continue; // the file headers
    const text = `${line.slice(1)}\n`;
    if (line.startsWith(' ')) {
      hunk.oldText += text;
      hunk.newText += text;
      last = { old: true, new: true };
    } else if (line.startsWith('-')) {
      hunk.oldText += text;
      last = { old: true, new: false };
    } else if (line.startsWith('+')) {
      hunk.newText += text;
      last = { old: false, new: true };
    } else if (line.startsWith('\\')) {
      // `\ No newline at end of file`: the line before it ends its file(s) without one.
      if (last.old) hunk.oldText = hunk.oldText.slice(0, -1);
      if (last.new) hunk.newText = hunk.newText.slice(0, -1);
      last = { old: false, new: false };
    }
    // The trailing empty line after the last hunk carries no text.
  }
  flush();
  return out;
}
