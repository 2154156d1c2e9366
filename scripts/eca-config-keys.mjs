#!/usr/bin/env node
// Writes scripts/eca-config-keys.txt: every key of ECA's config, as dotted paths (`*` for a name
// you choose, `[]` for a list's items), read from ECA's JSON schema (docs/config.json of
// editor-code-assistant/eca). docs/config-reference.md's "ECA" column is checked against it.
//
//   node scripts/eca-config-keys.mjs <eca checkout> [commit]
//
// The file's header names the source and the commit; refresh it when ECA adds keys.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

const [checkout, rev = 'HEAD'] = process.argv.slice(2);
if (!checkout) {
  process.stderr.write('usage: node scripts/eca-config-keys.mjs <eca checkout or git dir> [commit]\n');
  process.exit(2);
}
const git = (...args) => execFileSync('git', ['-C', checkout, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
const commit = git('rev-parse', rev).trim();
const schema = JSON.parse(git('show', `${commit}:docs/config.json`));
const defs = schema.definitions ?? schema.$defs ?? {};

const keys = new Set();
function walk(node, path, depth) {
  if (!node || typeof node !== 'object' || depth > 16) return;
  if (node.$ref) walk(defs[node.$ref.split('/').pop()], path, depth + 1);
  for (const k of ['anyOf', 'oneOf', 'allOf']) for (const n of node[k] ?? []) walk(n, path, depth + 1);
  for (const [k, v] of Object.entries(node.properties ?? {})) {
    const p = path ? `${path}.${k}` : k;
    keys.add(p);
    walk(v, p, depth + 1);
  }
  if (node.additionalProperties && typeof node.additionalProperties === 'object') walk(node.additionalProperties, `${path}.*`, depth + 1);
  for (const v of Object.values(node.patternProperties ?? {})) walk(v, `${path}.*`, depth + 1);
  if (node.items && typeof node.items === 'object') walk(node.items, `${path}[]`, depth + 1);
}
walk(schema, '', 0);
keys.delete('$schema');

const out = resolve(import.meta.dirname, 'eca-config-keys.txt');
const header = [
  '# ECA config keys, one dotted path a line (`*`: a name you choose, `[]`: a list item).',
  `# Source: https://github.com/editor-code-assistant/eca/blob/${commit}/docs/config.json`,
  `# Commit: ${commit}`,
  '# Written by scripts/eca-config-keys.mjs; read by src/config/reference.ts (docs/config-reference.md).',
];
writeFileSync(out, [...header, ...[...keys].sort()].join('\n') + '\n');
process.stdout.write(`${keys.size} keys → ${out}\n`);
