/**
 * The example providers under test/fixtures/providers/ are the spec's own, unmodified
 * (specs/tap-provider-gateway.md "Complete example — Node.js" / "— Python", vendored in
 * test/fixtures/specs/tap-provider-gateway.md so this runs on a clean clone). The spec's copy of
 * the Python example has lost its indentation (as printed it is a SyntaxError), so the fixture
 * restores the leading whitespace only: every line, stripped, is the spec's line.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { specBlock } from '../support/spec-excerpt.js';

const FIXTURES = resolve(import.meta.dirname, '../fixtures/providers');

describe('example provider fixtures are the spec’s', () => {
  it('Node.js: byte for byte', () => {
    expect(readFileSync(resolve(FIXTURES, 'example-provider.mjs'), 'utf8')).toBe(specBlock('tap-provider-gateway.md', '## Complete example — Node.js', 'js'));
  });

  it('Python: line for line, indentation restored', () => {
    const fixture = readFileSync(resolve(FIXTURES, 'example_provider.py'), 'utf8');
    expect(fixture.split('\n').map((l) => l.trimStart())).toEqual(specBlock('tap-provider-gateway.md', '## Complete example — Python', 'python').split('\n'));
    expect(fixture).toMatch(/^ {4}while True:$/m); // and it is indented
  });
});
