// ESLint: a few rules that catch real bugs (promises nobody awaits, empty catch blocks that hide
// why an error is fine) and the layer rule of ARCHITECTURE.md. Formatting is Prettier's job, not ESLint's.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

const root = path.dirname(fileURLToPath(import.meta.url));
const src = path.join(root, 'src');

// The layers, bottom to top, and what each may import besides itself. 'protocol' is every folder of
// src/protocol but eca (the editor façade's wire types); 'peers' is every peer, and each peer is its
// own element, so one peer importing another is caught too. Folders are read from disk so that a new
// protocol or peer folder is covered without touching this file.
const dirsOf = (rel) =>
  fs
    .readdirSync(path.join(src, rel), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
const peers = dirsOf('peers').map((name) => `peers/${name}`);
const protocols = dirsOf('protocol').filter((name) => name !== 'eca');
// The façades, each its own element so that one importing another is caught: ACP is server/acp/,
// ECA is server/eca/ and anything else in server/ (its files sat at the root of server/ until the
// house move of issue 30), and server/shared/ is what façades share (it imports no façade).
const ecaFacade = [
  'server/eca',
  ...fs
    .readdirSync(path.join(src, 'server'))
    .filter((name) => !['acp', 'eca', 'shared'].includes(name))
    .map((name) => `server/${name}`),
];

const elements = {
  util: { paths: ['util'], allow: [] },
  rpc: { paths: ['rpc'], allow: ['util'] },
  protocol: { paths: protocols.map((p) => `protocol/${p}`), allow: ['util', 'rpc'] },
  'protocol/eca': { paths: ['protocol/eca'], allow: ['util', 'rpc', 'protocol'] },
  shapes: { paths: ['shapes'], allow: ['util', 'rpc', 'protocol'] },
  ...Object.fromEntries(peers.map((peer) => [peer, { paths: [peer], allow: ['util', 'rpc', 'protocol', 'shapes'] }])),
  // The list of peers (one registration line each): it may name every peer; no peer may import it.
  'peers/index': { paths: ['peers/index.ts'], allow: ['shapes', 'peers'] },
  config: { paths: ['config'], allow: ['util', 'rpc', 'protocol', 'shapes', 'peers', 'peers/index'] },
  core: { paths: ['core'], allow: ['util', 'rpc', 'protocol', 'shapes', 'config'] },
  store: { paths: ['store'], allow: ['util', 'shapes', 'config', 'core'] },
  provider: { paths: ['provider'], allow: ['util', 'rpc', 'protocol', 'shapes'] },
  runtime: {
    paths: ['runtime'],
    allow: ['util', 'rpc', 'protocol', 'shapes', 'peers', 'peers/index', 'config', 'core', 'store', 'provider'],
  },
  'server/shared': { paths: ['server/shared'], allow: ['*'], deny: ['cli', 'server/eca', 'server/acp'] },
  'server/eca': { paths: ecaFacade, allow: ['*'], deny: ['cli', 'server/acp'] },
  'server/acp': { paths: ['server/acp'], allow: ['*'], deny: ['cli', 'server/eca'] },
  cli: { paths: ['cli'], allow: ['*'] },
  index: { paths: ['index.ts'], allow: ['*'] },
};

// Every entry of src/ must belong to a layer: a new top-level folder fails the lint until it is placed.
const placed = new Set(Object.values(elements).flatMap((e) => e.paths.map((p) => p.split('/')[0])));
for (const entry of fs.readdirSync(src)) {
  if (!placed.has(entry)) {
    throw new Error(`eslint.config.js: src/${entry} is in no layer; add it to the layer table`);
  }
}
for (const parent of ['protocol', 'peers']) {
  for (const entry of fs.readdirSync(path.join(src, parent))) {
    if (parent === 'peers' && entry === 'index.ts') continue;
    if (!fs.statSync(path.join(src, parent, entry)).isDirectory()) {
      throw new Error(`eslint.config.js: src/${parent}/${entry} must sit in one ${parent === 'peers' ? 'peer' : 'protocol'}'s folder`);
    }
  }
}

const expand = (name) => (name === 'peers' ? peers : [name]);
const layerZones = Object.entries(elements).flatMap(([name, el]) => {
  const allowed = new Set([name, ...el.allow.flatMap(expand)]);
  const forbidden = el.allow.includes('*') ? (el.deny ?? []) : Object.keys(elements).filter((other) => !allowed.has(other));
  const from = forbidden.flatMap((other) => elements[other].paths).map((p) => `src/${p}`);
  if (from.length === 0) return [];
  const may = el.allow.includes('*') ? `anything but ${el.deny.join(', ')}` : el.allow.join(', ') || 'nothing';
  return [
    {
      target: el.paths.map((p) => `src/${p}`),
      from,
      message: `Layer rule (ARCHITECTURE.md): src/${name} may import only from itself and ${may}.`,
    },
  ];
});

export default tseslint.config(
  { ignores: ['dist/', 'bench/.out/', 'bench/.work/', '.tsbuild-test/', 'node_modules/'] },
  {
    files: ['**/*.{js,mjs,cjs}'],
    rules: {
      'no-empty': 'error',
    },
  },
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: root },
    },
    plugins: { '@typescript-eslint': tseslint.plugin, 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: root })],
      // Without .ts here import-x would not read our modules, and no-cycle would see no edges.
      'import-x/extensions': ['.ts', '.js', '.mjs', '.cjs'],
    },
    rules: {
      'no-empty': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      'import-x/no-restricted-paths': ['error', { basePath: root, zones: layerZones }],
      // Type-only imports are erased at build time, so import-x never counts them in a cycle.
      'import-x/no-cycle': 'error',
      // Every deadline is an explicit timer cleared on settle (issue 31): Node 20's AbortSignal.any
      // holds its sources weakly, and a collected AbortSignal.timeout never fires.
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='AbortSignal']:matches([property.name='timeout'], [property.value='timeout'])",
          message: 'No AbortSignal.timeout in src/: use deadline() or underDeadline() of src/util/deadline.ts, an explicit timer the caller clears when the work settles.',
        },
      ],
    },
  },
);
