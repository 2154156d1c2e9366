/**
 * The example providers under test/fixtures/providers/ are the spec's own, unmodified
 * (specs/tap-provider-gateway.md "Complete example — Node.js" / "— Python"). The spec's copy of
 * the Python example has lost its indentation (as printed it is a SyntaxError), so the fixture
 * restores the leading whitespace only: every line, stripped, is the spec's line.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SPEC = resolve(import.meta.dirname, '../../../shared/specs/tap-provider-gateway.md');
const FIXTURES = resolve(import.meta.dirname, '../fixtures/providers');

function block(heading: string, lang: string): string {
  const spec = readFileSync(SPEC, 'utf8');
  const start = spec.indexOf(`${heading}\n\`\`\`${lang}\n`);
  if (start < 0) throw new Error(`no "${heading}" block in the spec`);
  const body = start + heading.length + lang.length + 5;
  return spec.slice(body, spec.indexOf('```', body));
}

describe.skipIf(!existsSync(SPEC))('example provider fixtures are the spec’s', () => {
  it('Node.js: byte for byte', () => {
    expect(readFileSync(resolve(FIXTURES, 'example-provider.mjs'), 'utf8')).toBe(block('## Complete example — Node.js', 'js'));
  });

  it('Python: line for line, indentation restored', () => {
    const fixture = readFileSync(resolve(FIXTURES, 'example_provider.py'), 'utf8');
    expect(fixture.split('\n').map((l) => l.trimStart())).toEqual(block('## Complete example — Python', 'python').split('\n'));
    expect(fixture).toMatch(/^ {4}while True:$/m); // and it is indented
  });
});
