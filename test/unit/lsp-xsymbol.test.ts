// With a server advertising xworkspaceSymbolByProperties, lsp_definition finds a symbol defined
// elsewhere through workspace/symbol with its SymbolDescriptor (fake server: test/fixtures/lsp).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LspHostImpl } from '../../src/peers/lsp/host.js';

const FAKE = join(import.meta.dirname, '../fixtures/lsp/fake-ls.mjs');
const quiet = { error() {}, warn() {}, info() {}, debug() {} };
const root = mkdtempSync(join(tmpdir(), 'lsp-xsym-'));
writeFileSync(join(root, 'a.fake'), 'first line\n  thing here\n');
const host = new LspHostImpl({
  servers: { fake: { command: process.execPath, args: [FAKE], extensions: ['fake'], env: { FAKE_LS_MODE: 'normal', FAKE_LS_XSYMBOL: '1' } } },
  roots: [root],
  env: process.env,
  log: quiet,
});
afterAll(() => host.dispose());

describe('workspace/symbol with a SymbolDescriptor', () => {
  it('is used by lsp_definition when the server advertises it', async () => {
    const r = await host
      .tools()
      .find((t) => t.name === 'lsp_definition')!
      .call({ path: 'a.fake', line: 2, symbol: 'thing' }, { signal: new AbortController().signal, roots: [root], chatId: 'c', editor: {} });
    const out = r.outputs.map((o) => (o.type === 'text' ? o.text : '')).join('');
    expect(r.error, out).toBe(false);
    expect(out).toContain('Symbol: {"name":"thing","kind":"function","package":{"name":"ext-pkg"}}');
    expect(out).toMatch(/Defined \(workspace\/symbol by descriptor\):\na\.fake:2:3/);
  });
});
