/**
 * What a finished tool call printed, in `patchbay chat`: the first lines of its output under the
 * `✓ tool (n ms)` line (dimmed, indented), and every output kept by number so `/expand [n]`
 * can print one in full. Outputs are the text parts of the `toolCalled` content
 * (protocol/eca/content.ts); images are named, not drawn.
 */
import type { ChatContent } from '../protocol/eca/content.js';
import type { Term } from './chat-term.js';
import { withoutControlChars } from '../util/text.js';

type ToolCalled = Extract<ChatContent, { type: 'toolCalled' }>;

/** Lines shown under a finished call. */
export const PREVIEW_LINES = 5;
/** How many outputs `/expand` can reach back to (older ones are dropped). */
const KEEP = 50;

export interface KeptOutput {
  n: number;
  name: string;
  text: string;
}

export function outputText(c: ToolCalled): string {
  return c.outputs
    .map((o) => (o.type === 'text' ? o.text : `[image ${o.mimeType}]`))
    .join('\n')
    .replace(/\r\n?/g, '\n')
    .replace(/^\n+|\s+$/g, '');
}

export class ToolOutputs {
  private readonly kept: KeptOutput[] = [];
  private next = 1;
  /** Whether `/expand` can be typed afterwards (the REPL), so the hint names it. */
  expandable = false;

  constructor(private readonly term: Term) {}

  /** Keeps the output; prints its first lines (after the `✓` line) unless `preview` is false. */
  add(c: ToolCalled, preview: boolean): void {
    // Kept without control characters: a tool's output (a file's bytes, an MCP server's text) must
    // not move the cursor or send escape sequences to the terminal, in the preview or in /expand.
    const text = withoutControlChars(outputText(c), { keepNewlines: true });
    if (!text) return;
    const n = this.next++;
    this.kept.push({ n, name: c.name, text });
    if (this.kept.length > KEEP) this.kept.shift();
    const lines = text.split('\n');
    const t = this.term;
    if (preview) for (const l of lines.slice(0, PREVIEW_LINES)) t.outLine(t.paint('dim', `    ${this.clip(l)}`));
    const hidden = preview ? lines.length - PREVIEW_LINES : lines.length - 1;
    if (hidden > 0) t.outLine(t.paint('dim', `    … ${hidden} more line${hidden === 1 ? '' : 's'}${this.expandable ? ` (/expand ${n})` : ''}`));
  }

  /** `/expand [n]`: the output, whole; the last one without `n`. */
  get(n?: number): KeptOutput | undefined {
    return n === undefined ? this.kept.at(-1) : this.kept.find((k) => k.n === n);
  }

  /** One line of the preview fits the terminal (tabs as spaces, control characters dropped). */
  private clip(line: string): string {
    const clean = withoutControlChars(line.replace(/\t/g, '  '));
    const width = Math.max(20, (this.term.stdout.isTTY ? (this.term.stdout.columns ?? 80) : 200) - 5);
    return clean.length > width ? `${clean.slice(0, width - 1)}…` : clean;
  }
}
