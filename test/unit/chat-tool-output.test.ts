import { describe, expect, it } from 'vitest';
import { Term } from '../../src/cli/chat-term.js';
import { ToolOutputs } from '../../src/cli/chat-tool-output.js';

function sink(): { write(s: string): boolean; text: string } {
  return {
    text: '',
    write(s: string) {
      this.text += s;
      return true;
    },
  };
}

describe('tool output in patchbay chat', () => {
  it('keeps no control characters for the preview or /expand: a file’s escape sequences never reach the terminal', () => {
    const out = sink();
    const outputs = new ToolOutputs(new Term(out, sink(), {}));
    const hostile = 'line 1\n\x1b]52;c;ZXZpbA==\x07line 2\r\n\x1b[2Kline 3\x9b31m\n' + Array.from({ length: 8 }, (_, i) => `more ${i}`).join('\n');
    outputs.add({ type: 'toolCalled', id: 't1', name: 'read_file', arguments: {}, error: false, outputs: [{ type: 'text', text: hostile }] } as never, true);
    const kept = outputs.get()!.text;
    expect(kept).toContain('line 1\n]52;c;ZXZpbA==line 2\n[2Kline 331m');
    expect(kept).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    expect(out.text).not.toMatch(/[\x07\x1b\x9b]/);
    expect(out.text).toContain('more lines');
  });
});
