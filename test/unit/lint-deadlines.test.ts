/**
 * The deadline rule of eslint.config.js (issue 31 finding 4): `AbortSignal.timeout` anywhere in
 * src/, alone or inside `AbortSignal.any`, is reported with a message pointing at
 * src/util/deadline.ts; an `AbortSignal.any` over signals someone holds is not.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// No type program and no import graph: only the syntax rules matter here.
const eslint = new ESLint({
  cwd: root,
  overrideConfig: {
    languageOptions: { parserOptions: { projectService: false } },
    rules: { '@typescript-eslint/no-floating-promises': 'off', '@typescript-eslint/no-misused-promises': 'off', 'import-x/no-cycle': 'off' },
  },
});

async function restricted(code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, 'src/util/deadline-probe.ts') });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-syntax').map((m) => m.message);
}

describe('the deadline rule (eslint.config.js)', () => {
  it('reports AbortSignal.timeout inside AbortSignal.any, and alone', async () => {
    const found = await restricted(
      ['export const a = (s: AbortSignal) => AbortSignal.any([s, AbortSignal.timeout(30_000)]);', 'export const b = AbortSignal.timeout(5);', "export const c = AbortSignal['timeout'];"].join('\n'),
    );
    expect(found).toHaveLength(3);
    for (const m of found) expect(m).toContain('src/util/deadline.ts');
  });

  it('lets AbortSignal.any combine signals that are held elsewhere', async () => {
    expect(await restricted('export const a = (s: AbortSignal, c: AbortController) => AbortSignal.any([s, c.signal]);')).toEqual([]);
  });
});
