#!/usr/bin/env node
// Writes the generated part of docs/config-reference.md (every config key) from the built schema:
// `npm run docs:config` (it compiles first). `--check` only says whether the page is up to date.
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const { renderConfigReference, spliceConfigReference } = await import(resolve(root, 'dist/config/reference.js'));
const pagePath = resolve(root, 'docs/config-reference.md');
const page = readFileSync(pagePath, 'utf8');
const next = spliceConfigReference(page, renderConfigReference(readFileSync(resolve(root, 'scripts/eca-config-keys.txt'), 'utf8')));
if (process.argv.includes('--check')) {
  if (next !== page) {
    process.stderr.write('docs/config-reference.md is out of date: run `npm run docs:config`\n');
    process.exit(1);
  }
} else if (next !== page) {
  writeFileSync(pagePath, next);
  process.stdout.write('docs/config-reference.md updated\n');
} else process.stdout.write('docs/config-reference.md is up to date\n');
