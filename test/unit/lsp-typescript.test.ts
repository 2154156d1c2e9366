// The LSP host against the real typescript-language-server (devDependency) on a small project.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolContext } from '../../src/shapes/tool.js';
import { LspHostImpl } from '../../src/peers/lsp/host.js';
import { isAlive } from '../../src/util/pid.js';
import { isZombie } from '../../src/util/process-tree.js';

const quiet = { error() {}, warn() {}, info() {}, debug() {} };
const GREETER = `export class Greeter {
  constructor(private readonly name: string) {}
  greet(): string {
    return \`Hello, \${this.name}\`;
  }
}

export function count(n: number): number {
  return n + 1;
}
`;
const MAIN = `import { Greeter, count } from './greeter.js';

const café = '☕🎉'; const greeter = new Greeter(café);
console.log(greeter.greet(), count(2));
export const total: number = count(3);
`;

let root: string;
let host: LspHostImpl;
const env = { ...process.env, PATH: [resolve('node_modules/.bin'), process.env.PATH].join(delimiter) };
const ctx = (): ToolContext => ({ signal: new AbortController().signal, roots: [root], chatId: 'c', editor: {} });
const text = (r: { outputs: Array<{ type: string; text?: string }> }) => r.outputs.map((o) => o.text).join('');
const call = async (name: string, args: Record<string, unknown>, h = host) => {
  const r = await h
    .tools()
    .find((t) => t.name === name)!
    .call(args, ctx());
  expect(r.error, text(r)).toBe(false);
  return text(r);
};

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'lsp-ts-'));
  mkdirSync(join(root, 'src'));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'fixture', type: 'module', private: true }));
  writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, module: 'NodeNext', target: 'ES2022', noEmit: true }, include: ['src'] }));
  writeFileSync(join(root, 'src/greeter.ts'), GREETER);
  writeFileSync(join(root, 'src/main.ts'), MAIN);
  host = new LspHostImpl({ servers: {}, roots: [root], env, log: quiet, diagnosticsWaitMs: 20_000 });
});
afterAll(async () => {
  await host?.dispose();
});

describe('LspHost with typescript-language-server', () => {
  it('offers the built-in server found on PATH', () => {
    expect(host.servers()).toContainEqual(expect.objectContaining({ name: 'typescript-language-server', args: ['--stdio'], status: 'stopped' }));
  });

  it('finds a class by workspace symbol, starting the server on demand', async () => {
    const out = await call('lsp_workspace_symbols', { query: 'Greeter' });
    expect(out).toMatch(/^Class Greeter — src\/greeter\.ts:1:1$/m); // the declaration's range, from `export`
    expect(host.servers().find((s) => s.name === 'typescript-language-server')).toMatchObject({ status: 'running', roots: [root] });
  });

  it('go to definition from a line with non-ASCII text before the symbol', async () => {
    // `new Greeter(…)` resolves to the class and its constructor.
    expect((await call('lsp_definition', { path: 'src/main.ts', line: 3, symbol: 'Greeter' })).split('\n').sort()).toEqual([
      'src/greeter.ts:1:14: export class Greeter {',
      'src/greeter.ts:2:3: constructor(private readonly name: string) {}',
    ]);
    // `greeter` comes after '☕🎉' (4 UTF-16 units, 2 characters): a code-point offset would land inside `const`.
    expect(await call('lsp_hover', { path: 'src/main.ts', line: 3, symbol: 'greeter' })).toContain('const greeter: Greeter');
    expect(await call('lsp_definition', { path: join(root, 'src/main.ts'), line: 4, symbol: 'greet' })).toMatch(/^src\/greeter\.ts:3:3: greet\(\): string \{$/);
  });

  it('references across files', async () => {
    const out = (await call('lsp_references', { path: 'src/greeter.ts', line: 8, symbol: 'count' })).split('\n');
    expect(out.map((l) => l.split(': ')[0]).sort()).toEqual(['src/greeter.ts:8:17', 'src/main.ts:1:19', 'src/main.ts:4:30', 'src/main.ts:5:30']);
  });

  it('hover shows the type', async () => {
    expect(await call('lsp_hover', { path: 'src/main.ts', line: 5, symbol: 'total' })).toContain('const total: number');
    // character fallback: column 7 of line 3 is `café`, after nothing non-ASCII
    expect(await call('lsp_hover', { path: 'src/main.ts', line: 3, character: 7 })).toContain('const café: "☕🎉"');
  });

  it('document symbols, hierarchical with lines', async () => {
    const out = await call('lsp_document_symbols', { path: 'src/greeter.ts' });
    expect(out).toMatch(/^Class Greeter \(1:14\)$/m);
    expect(out).toMatch(/^ {2}Method greet \(3:3\)$/m);
    expect(out).toMatch(/^Function count \(8:17\)$/m);
  });

  it('afterFileChange reports a new type error, then nothing once fixed', async () => {
    const main = join(root, 'src/main.ts');
    writeFileSync(main, MAIN.replace('count(3);', "'three';"));
    const errors = await host.afterFileChange(main, new AbortController().signal);
    expect(errors.kind).toBe('errors');
    expect(errors.kind === 'errors' && errors.errors).toMatch(/^src\/main\.ts:5:14 error \[typescript 2322\] Type 'string' is not assignable to type 'number'\.$/);
    expect(host.diagnostics(main)).toMatchObject([{ severity: 'error', code: '2322', range: { start: { line: 4, character: 13 } } }]);
    expect(await call('lsp_diagnostics', { path: 'src/main.ts' })).toContain("src/main.ts:5:14 error [typescript 2322] Type 'string'");
    writeFileSync(main, MAIN);
    expect(await host.afterFileChange(main, new AbortController().signal)).toEqual({ kind: 'clean', note: '' });
    expect(host.diagnostics(main)).toEqual([]);
  });

  it('a change in one file is seen by queries on another', async () => {
    const greeter = join(root, 'src/greeter.ts');
    writeFileSync(greeter, GREETER.replace('export function count(n: number): number', 'export function count(n: number, m = 0): number'));
    await host.afterFileChange(greeter, new AbortController().signal);
    expect(await call('lsp_hover', { path: 'src/main.ts', line: 5, symbol: 'count' })).toContain('count(n: number, m?: number): number');
  });

  it('dispose stops the server and its tsserver children', async () => {
    const h = new LspHostImpl({ servers: {}, roots: [root], env, log: quiet });
    await call('lsp_document_symbols', { path: 'src/greeter.ts' }, h);
    const { descendants } = await import('../../src/util/process-tree.js');
    const pids = descendants(process.pid).filter((p) => isAlive(p) && !isZombie(p));
    await h.dispose();
    const before = new Set(pids);
    const left = descendants(process.pid).filter((p) => isAlive(p) && !isZombie(p));
    // Only the shared `host`'s processes remain.
    expect(left.every((p) => before.has(p))).toBe(true);
    expect(left.length).toBeLessThan(pids.length);
    expect(h.servers().find((s) => s.name === 'typescript-language-server')?.status).toBe('stopped');
  });
});
