/**
 * bin/patchbay runs dist/bundle/main.cjs as one vm.Script. V8 keeps a script's source as Latin-1
 * when every character fits, and as UTF-16 (twice the bytes, ~1.5 MB more resident memory at
 * idle) as soon as one does not. esbuild escapes non-ASCII in strings but not inside regex
 * literals, so a `/…/` in src/ is enough to cost every patchbay process that memory (`npm run
 * bench -- rss`). Build first (`npm run build`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const BUNDLE = resolve(import.meta.dirname, '../../dist/bundle/main.cjs');

describe.skipIf(!existsSync(BUNDLE))('the CLI bundle', () => {
  it('holds only Latin-1 characters (write \\u2026, not …, in a regex literal)', () => {
    const text = readFileSync(BUNDLE, 'utf8');
    const wide: string[] = [];
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0xff) wide.push(JSON.stringify(text.slice(Math.max(0, i - 40), i + 20)));
    expect(wide).toEqual([]);
  });
});
