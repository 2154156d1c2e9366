/**
 * Tool-result images checked as prompt images are (src/core/tool-calls/tool-images.ts): any tool (native,
 * MCP, a WebSocket provider) may return one; a bad one becomes a text note, the rest is kept.
 */
import { describe, expect, it } from 'vitest';
import { IMAGE_MAX_BYTES } from '../../src/core/context/images.js';
import { toolImages } from '../../src/core/chat/messages.js';
import { checkToolImages } from '../../src/core/tool-calls/tool-images.js';
import type { ToolResult } from '../../src/shapes/tool.js';

const PNG = 'iVBORw0KGgo=';

describe('checkToolImages', () => {
  it('turns each bad image into a note saying why, keeps the good ones (image/jpg read as image/jpeg, whitespace dropped)', () => {
    const big = Buffer.alloc(IMAGE_MAX_BYTES + 1).toString('base64');
    const result: ToolResult = {
      error: false,
      outputs: [
        { type: 'text', text: 'shots' },
        { type: 'image', mimeType: 'image/png', data: 'not base64!' },
        { type: 'image', mimeType: 'image/bmp', data: PNG },
        { type: 'image', mimeType: 'image/png', data: big },
        { type: 'image', mimeType: 'image/jpg', data: 'iVBO\nRw0KGgo=' },
      ],
    };
    expect(checkToolImages(result).outputs).toEqual([
      { type: 'text', text: 'shots' },
      { type: 'text', text: '[image omitted: the data is not valid base64]' },
      { type: 'text', text: '[image omitted: image/bmp is not a type the models take (png, jpeg, gif or webp)]' },
      { type: 'text', text: '[image omitted: the image is over the limit of 20 MB]' },
      { type: 'image', mimeType: 'image/jpeg', data: PNG },
    ]);
  });

  it('leaves a result without images as it is', () => {
    const result: ToolResult = { error: true, outputs: [{ type: 'text', text: 'no' }] };
    expect(checkToolImages(result)).toBe(result);
  });

  it('toolImages keeps a bad image stored before the check out of the model request', () => {
    expect(
      toolImages([
        { type: 'image', mimeType: 'image/png', data: 'not base64!' },
        { type: 'image', mimeType: 'image/png', data: PNG },
      ]),
    ).toEqual([{ mediaType: 'image/png', base64: PNG }]);
  });
});
