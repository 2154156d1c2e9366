/** The terminal client's rendering of a progress text that carries a percentage. */
import { describe, expect, it } from 'vitest';
import { withBar } from '../../src/cli/chat-render.js';

describe('withBar', () => {
  it('draws a 20-cell bar after the percentage and keeps the rest', () => {
    expect(withBar('Downloading m.gguf: 45% (500 MB of 1100 MB)')).toBe('Downloading m.gguf: 45% [#########           ] (500 MB of 1100 MB)');
    expect(withBar('Downloading m.gguf: 100% (1 MB of 1 MB)')).toBe('Downloading m.gguf: 100% [####################] (1 MB of 1 MB)');
    expect(withBar('Downloading m.gguf: 0% (0 MB of 1 MB)')).toBe('Downloading m.gguf: 0% [                    ] (0 MB of 1 MB)');
  });

  it('leaves texts without a percentage alone', () => {
    expect(withBar('Waiting model')).toBe('Waiting model');
    expect(withBar('Downloading m.gguf: 3.2 MB')).toBe('Downloading m.gguf: 3.2 MB');
  });
});
