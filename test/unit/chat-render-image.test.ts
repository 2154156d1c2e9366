/**
 * `patchbay chat` and ECA's `ChatImageContent` (a tool's image, or an attachment on replay): a
 * terminal draws no image, so it names it, with its media type and size.
 */
import { describe, expect, it } from 'vitest';
import { Renderer } from '../../src/cli/chat-render.js';
import { Term } from '../../src/cli/chat-term.js';

describe('Renderer: image content', () => {
  it('prints one line naming the image', () => {
    const out: string[] = [];
    const stream = { write: (s: string) => (out.push(s), true), isTTY: false };
    const r = new Renderer(new Term(stream, stream, {}), '/tmp');
    r.content('assistant', { type: 'image', mediaType: 'image/png', base64: Buffer.alloc(4096).toString('base64') });
    expect(out.join('')).toBe('[image image/png, 4 KB]\n');
  });
});

describe('Renderer: the usage line', () => {
  it('shows how full the context window is after the last request (ECA sessionTokens), with the last step and costs', () => {
    const out: string[] = [];
    const stream = { write: (s: string) => (out.push(s), true), isTTY: false };
    const r = new Renderer(new Term(stream, stream, {}), '/tmp');
    r.usageLine({
      type: 'usage',
      sessionTokens: 25_000,
      messageInputTokens: 24_000,
      messageOutputTokens: 1_000,
      lastMessageCost: '0.01',
      sessionCost: '0.05',
      limit: { context: 100_000, output: 8_000 },
    });
    const line = out.join('');
    expect(line).toContain('context 25');
    expect(line).toContain('(25%)');
    expect(line).toContain('$0.01 (chat $0.05)');
  });
});
