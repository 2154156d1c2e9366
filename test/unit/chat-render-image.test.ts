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
