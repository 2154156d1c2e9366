import { mkdtempSync, writeFileSync, mkdirSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { columnToUtf16, lineAt, symbolCharacter, utf16ToColumn, OpenDocuments } from '../../src/peers/lsp/documents.js';
import { languageIdOf } from '../../src/peers/lsp/language-ids.js';
import { resolveServers, UNTRUSTED_LOCAL_NOTE } from '../../src/peers/lsp/config.js';
import { LspHostImpl } from '../../src/peers/lsp/host.js';
import { contentHash, isTrustedFolder, recordTrust } from '../../src/config/trust.js';

const quiet = { error() {}, warn() {}, info() {}, debug() {} };

describe('UTF-16 positions', () => {
  it('finds a symbol after non-ASCII text at its UTF-16 offset', () => {
    const line = 'const 🎉 = café(résumé, total);';
    // '🎉' is 2 UTF-16 units, 'é' is 1: "const 🎉 = café(" is 16 units, "résumé, " 8 more.
    expect(symbolCharacter(line, 'total')).toBe(24);
    expect(line.slice(24, 29)).toBe('total');
    expect(symbolCharacter(line, 'café')).toBe(11);
    expect(symbolCharacter(line, 'résumé')).toBe(16);
  });

  it('prefers a whole-word match and falls back to a substring', () => {
    expect(symbolCharacter('const valid = id(x);', 'id')).toBe(14);
    expect(symbolCharacter('const éid = id;', 'id')).toBe(12); // 'é' is a letter: not a boundary
    expect(symbolCharacter('fooBar()', 'Bar')).toBe(3);
    expect(symbolCharacter('a.b.c', 'b.c')).toBe(2);
    expect(symbolCharacter('nothing here', 'zzz')).toBeUndefined();
  });

  it('converts 1-based character columns to and from UTF-16', () => {
    const line = '👍👍 x';
    expect(columnToUtf16(line, 1)).toBe(0);
    expect(columnToUtf16(line, 4)).toBe(5); // 'x' is the 4th character, at unit 5
    expect(line[columnToUtf16(line, 4)]).toBe('x');
    expect(utf16ToColumn(line, 5)).toBe(4);
    expect(utf16ToColumn(line, 2)).toBe(2);
    expect(columnToUtf16('ab', 99)).toBe(2);
    expect(utf16ToColumn('àb', 1)).toBe(2);
  });

  it('splits lines on any terminator', () => {
    expect(lineAt('a\r\nb\nc', 1)).toBe('b');
    expect(lineAt('a\r\nb\nc', 2)).toBe('c');
    expect(lineAt('a', 5)).toBe('');
  });

  it('tracks versions and skips no-op changes', () => {
    const docs = new OpenDocuments();
    expect(docs.open('file:///a.ts', 'typescript', 'x').version).toBe(1);
    expect(docs.change('file:///a.ts', 'x')).toBeUndefined();
    expect(docs.change('file:///a.ts', 'y')).toBe(2);
    expect(languageIdOf('/p/a.tsx')).toBe('typescriptreact');
    expect(languageIdOf('/p/a.py')).toBe('python');
    // One table for didOpen and xcontent: both tables' entries, an unknown extension is its own id.
    expect(languageIdOf('/p/Cargo.toml')).toBe('toml');
    expect(languageIdOf('/p/a.kt')).toBe('kotlin');
    expect(languageIdOf('/p/a.xyz')).toBe('xyz');
    expect(languageIdOf('/p/Makefile')).toBe('plaintext');
  });
});

describe('languageServers config', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lsp-config-'));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'gopls'), '#!/bin/sh\n');
  chmodSync(join(bin, 'gopls'), 0o755);

  it('offers built-ins only when their command is on PATH', () => {
    const r = resolveServers({}, [dir], { PATH: bin });
    expect([...r.servers.keys()]).toEqual(['gopls']);
    expect(resolveServers({}, [dir], { PATH: '' }).servers.size).toBe(0);
  });

  it('runs typescript-language-server from <root>/node_modules/.bin only when the folder is trusted', () => {
    const root = mkdtempSync(join(tmpdir(), 'lsp-root-'));
    mkdirSync(join(root, 'node_modules', '.bin'), { recursive: true });
    const local = join(root, 'node_modules', '.bin', 'typescript-language-server');
    writeFileSync(local, '#!/bin/sh\n');
    chmodSync(local, 0o755);
    const home = mkdtempSync(join(tmpdir(), 'lsp-home-'));
    const trustedFolder = (r: string) => isTrustedFolder(home, r);

    // A cloned repository ships the program: not run until the user trusts the folder.
    const untrusted = resolveServers({}, [root], { PATH: '' }, { trustedFolder });
    expect(untrusted.servers.has('typescript-language-server')).toBe(false);
    expect(untrusted.untrusted.get('typescript-language-server')).toBe(UNTRUSTED_LOCAL_NOTE);
    expect(resolveServers({}, [root], { PATH: '' }).servers.size).toBe(0); // no predicate: no folder is trusted
    const host = new LspHostImpl({ servers: {}, roots: [root], env: { PATH: '' }, trustedFolder, log: quiet });
    expect(host.servers()).toEqual([expect.objectContaining({ name: 'typescript-language-server', status: 'disabled', note: UNTRUSTED_LOCAL_NOTE })]);
    expect(host.processFor(join(root, 'a.ts'))).toBeUndefined();

    recordTrust(home, root, contentHash(''));
    const trusted = resolveServers({}, [root], { PATH: '' }, { trustedFolder });
    expect(trusted.servers.get('typescript-language-server')?.command).toBe(local);
    expect(trusted.servers.get('typescript-language-server')?.args).toEqual(['--stdio']);
    expect(trusted.untrusted.size).toBe(0);
  });

  it('reports bad entries without throwing, and lets users extend or disable built-ins', () => {
    const r = resolveServers({ bad: { command: 5 }, noext: { command: 'x' }, gopls: { args: ['-rpc.trace'] }, clangd: { disabled: true }, mine: { command: 'my-ls', extensions: ['foo'] } }, [dir], {
      PATH: bin,
    });
    expect(r.problems.map((p) => p.name).sort()).toEqual(['bad', 'noext']);
    expect(r.problems.find((p) => p.name === 'bad')?.error).toMatch(/invalid languageServers\.bad/);
    expect(r.servers.get('gopls')).toMatchObject({ command: 'gopls', args: ['-rpc.trace'], extensions: ['go'] });
    expect(r.servers.get('mine')).toMatchObject({ command: 'my-ls', args: [], extensions: ['foo'] });
    expect(r.disabled.has('clangd')).toBe(true);
    expect([...r.servers.keys()][0]).toBe('gopls'); // user entries first: they win over built-ins for the same files
  });
});
