/**
 * Reads the spec excerpts vendored under test/fixtures/specs/ (each file names the spec and the
 * sections it copies). Tests read these, never ../shared/specs: that folder is not in the
 * repository, and a test that skips on a clean clone checks nothing.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const SPECS = resolve(import.meta.dirname, '../fixtures/specs');

function excerpt(file: string): string {
  return readFileSync(resolve(SPECS, file), 'utf8');
}

/** The body of the fenced `lang` code block right under `heading` (the heading line, exactly). */
export function specBlock(file: string, heading: string, lang: string): string {
  const spec = excerpt(file);
  const open = `${heading}\n\`\`\`${lang}\n`;
  const start = spec.indexOf(open);
  if (start < 0) throw new Error(`no "${heading}" ${lang} block in test/fixtures/specs/${file}`);
  const body = start + open.length;
  const end = spec.indexOf('```', body);
  if (end < 0) throw new Error(`the "${heading}" block in test/fixtures/specs/${file} is not closed`);
  return spec.slice(body, end);
}

/** The rows of the Markdown table right under `heading`, as arrays of trimmed cells (header and rule row dropped). */
export function specTable(file: string, heading: string): string[][] {
  const lines = excerpt(file).split('\n');
  const at = lines.indexOf(heading);
  if (at < 0) throw new Error(`no "${heading}" section in test/fixtures/specs/${file}`);
  const rows: string[][] = [];
  for (const line of lines.slice(at + 1)) {
    if (!line.startsWith('|')) {
      if (rows.length > 0) break;
      continue;
    }
    rows.push(
      line
        .slice(1, line.endsWith('|') ? -1 : undefined)
        .split('|')
        .map((c) => c.trim()),
    );
  }
  if (rows.length < 3) throw new Error(`no table under "${heading}" in test/fixtures/specs/${file}`);
  return rows.slice(2);
}
