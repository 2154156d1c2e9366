/**
 * A file change as ACP diffs. Core keeps a change as a unified diff (shapes/tool.ts
 * `FileChangeDetails`, stored with the chat); ACP wants the text before and after. Each hunk
 * becomes one diff of its own lines (context and removed lines before, context and added lines
 * after), which is also what can be rebuilt for a stored chat's replay. A hunk that starts from
 * nothing (`-0,0`) is a new file: its `oldText` is null.
 */
import type { ToolCallContent } from '@agentclientprotocol/sdk';

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@/;

export function diffContents(path: string, unified: string): ToolCallContent[] {
  const out: ToolCallContent[] = [];
  let hunk: { oldText: string[]; newText: string[]; created: boolean } | undefined;
  const flush = () => {
    if (hunk) out.push({ type: 'diff', path, oldText: hunk.created ? null : hunk.oldText.join('\n'), newText: hunk.newText.join('\n') });
  };
  for (const line of unified.split('\n')) {
    const head = HUNK.exec(line);
    if (head) {
      flush();
      hunk = { oldText: [], newText: [], created: head[1] === '0' && head[2] === '0' };
      continue;
    }
    if (!hunk) continue; // the file headers
    if (line.startsWith(' ')) {
      hunk.oldText.push(line.slice(1));
      hunk.newText.push(line.slice(1));
    } else if (line.startsWith('-')) hunk.oldText.push(line.slice(1));
    else if (line.startsWith('+')) hunk.newText.push(line.slice(1));
    // `\ No newline at end of file` and the trailing empty line carry no text.
  }
  flush();
  return out;
}
