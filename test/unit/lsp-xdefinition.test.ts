// patchbay's LSP tools use the Sourcegraph extensions when a server advertises them: with the real
// javascript-typescript-langserver, lsp_definition also names the symbol (a SymbolDescriptor).
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolContext } from '../../src/shapes/tool.js';
import { LspHostImpl } from '../../src/peers/lsp/host.js';

const quiet = { error() {}, warn() {}, info() {}, debug() {} };
const STDIO = resolve('node_modules/javascript-typescript-langserver/lib/language-server-stdio.js');
let root: string;
let host: LspHostImpl;
const ctx = (): ToolContext => ({ signal: new AbortController().signal, roots: [root], chatId: 'c', editor: {} });

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'lsp-x-'));
  mkdirSync(join(root, 'src'));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'xfixture', version: '1.0.0' }));
  writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'commonjs', target: 'es2017' }, include: ['src'] }));
  writeFileSync(join(root, 'src/a.ts'), 'export function greet(name: string): string {\n  return "hi " + name;\n}\n');
  writeFileSync(join(root, 'src/b.ts'), "import { greet } from './a';\nexport const msg = greet('x');\n");
  host = new LspHostImpl({
    // Only this server: the built-in typescript-language-server is switched off.
    servers: { jsts: { command: process.execPath, args: [STDIO], extensions: ['ts'] }, 'typescript-language-server': { disabled: true } },
    roots: [root],
    env: process.env,
    log: quiet,
  });
});
afterAll(async () => {
  await host?.dispose();
});

describe('Sourcegraph extensions through the LSP tools', () => {
  it('lsp_definition names the symbol with a SymbolDescriptor from textDocument/xdefinition', async () => {
    const r = await host
      .tools()
      .find((t) => t.name === 'lsp_definition')!
      .call({ path: 'src/b.ts', line: 2, symbol: 'greet' }, ctx());
    const out = r.outputs.map((o) => (o.type === 'text' ? o.text : '')).join('');
    expect(r.error, out).toBe(false);
    expect(out).toMatch(/src\/a\.ts:1/);
    expect(out).toMatch(/Symbol: \{[^}]*"name":"greet"/);
    expect(out).toMatch(/"kind":"function"/);
  }, 60_000);

  it('lsp_references also asks workspace/xreferences by the SymbolDescriptor', async () => {
    const r = await host
      .tools()
      .find((t) => t.name === 'lsp_references')!
      .call({ path: 'src/b.ts', line: 2, symbol: 'greet' }, ctx());
    const out = r.outputs.map((o) => (o.type === 'text' ? o.text : '')).join('');
    expect(r.error, out).toBe(false);
    expect(out).toMatch(/By symbol \{[^}]*"name":"greet"[^\n]*\(workspace\/xreferences\):/);
    const after = out.slice(out.indexOf('workspace/xreferences'));
    expect(after).toMatch(/src\/b\.ts:2/);
  }, 60_000);
});
