/** config/edit.ts: a config file changed one key at a time, keeping what the user wrote. */
import { describe, expect, it } from 'vitest';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { editConfigFile, editText, writeAtomically } from '../../src/config/edit.js';
import { parseJsonc } from '../../src/config/jsonc.js';

const value = (text: string) => {
  const r = parseJsonc(text);
  if (!r.ok) throw new Error(r.message);
  return r.value as any;
};

describe('editText', () => {
  it('creates a file from nothing, two-space indented, ending with a newline', () => {
    const out = editText('', [{ path: ['mcpServers', 'a'], value: { command: 'x' } }]);
    expect(out).toBe('{\n  "mcpServers": {\n    "a": {\n      "command": "x"\n    }\n  }\n}\n');
  });

  it('adds into an object written on one line without spreading its neighbours', () => {
    const text = '{ "mcpServers": { "keep": {"command":"k"} } }';
    const out = editText(text, [{ path: ['mcpServers', 'new'], value: { command: 'n' } }]);
    expect(out.startsWith('{ "mcpServers": { "keep": {"command":"k"}')).toBe(true);
    expect(value(out).mcpServers).toEqual({ keep: { command: 'k' }, new: { command: 'n' } });
  });

  it('keeps tabs and CRLF line endings, and a set-then-delete round trip is byte-identical', () => {
    const text = '{\r\n\t// mine\r\n\t"mcpServers": {\r\n\t\t"a": {\r\n\t\t\t"command": "x"\r\n\t\t}\r\n\t}\r\n}\r\n';
    const on = editText(text, [{ path: ['mcpServers', 'a', 'disabled'], value: true }]);
    expect(on).toContain('\r\n\t\t\t"disabled": true\r\n');
    expect(on).not.toMatch(/[^\r]\n/);
    expect(editText(on, [{ path: ['mcpServers', 'a', 'disabled'], value: undefined }])).toBe(text);
  });

  it('creates the parent object when the file has none', () => {
    const out = editText('{\n    "logLevel": "info" // why\n}\n', [{ path: ['mcpServers', 'a'], value: { url: 'http://h/' } }]);
    // The comment stays with the property it follows; the new one goes on a line of its own.
    expect(out).toContain('"logLevel": "info", // why\n    "mcpServers"');
    expect(value(out)).toEqual({ logLevel: 'info', mcpServers: { a: { url: 'http://h/' } } });
  });

  // The reviewer's cases: jsonc-parser's modify alone gave `"a": {..}, // b note`, `"command": "z" // off for now`
  // and moved `// hi` onto the new entry.
  const THREE = '{\n  "mcpServers": {\n    "a": {"command": "a"}, // a note\n    // the b server\n    "b": {"command": "b"}, // b note\n    "c": {"command": "c"}\n  }\n}\n';

  it('deleting a middle entry takes its comment lines and its own trailing comment with it', () => {
    const out = editText(THREE, [{ path: ['mcpServers', 'b'], value: undefined }]);
    expect(out).toBe('{\n  "mcpServers": {\n    "a": {"command": "a"}, // a note\n    "c": {"command": "c"}\n  }\n}\n');
  });

  it('deleting the last entry removes the comma before it and keeps that line’s comment', () => {
    const out = editText(THREE, [{ path: ['mcpServers', 'c'], value: undefined }]);
    expect(out).toBe('{\n  "mcpServers": {\n    "a": {"command": "a"}, // a note\n    // the b server\n    "b": {"command": "b"} // b note\n  }\n}\n');
    const flag = '{\n  "s": {\n    "command": "z", // a note\n    "disabled": true // off for now\n  }\n}\n';
    expect(editText(flag, [{ path: ['s', 'disabled'], value: undefined }])).toBe('{\n  "s": {\n    "command": "z" // a note\n  }\n}\n');
  });

  it('inserting after an entry that has a trailing comma and a comment leaves the comment where it was', () => {
    const text = '{\n  "mcpServers": {\n    "y": {"command": "y"}, // hi\n  }\n}\n';
    const out = editText(text, [{ path: ['mcpServers', 'z'], value: { command: 'z' } }]);
    expect(out.startsWith('{\n  "mcpServers": {\n    "y": {"command": "y"}, // hi\n    "z": {')).toBe(true);
    expect(value(out).mcpServers).toEqual({ y: { command: 'y' }, z: { command: 'z' } });
  });
});

describe('editConfigFile', () => {
  it('writes atomically (no temp file left), keeps the mode, and creates missing folders', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-edit-'));
    const file = join(dir, 'config.json');
    writeFileSync(file, '{}\n', { mode: 0o600 });
    editConfigFile(file, [{ path: ['a'], value: 1 }]);
    expect(value(readFileSync(file, 'utf8'))).toEqual({ a: 1 });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['config.json']);
    const deep = join(dir, 'x', 'y', 'config.json');
    editConfigFile(deep, [{ path: ['a'], value: 2 }]);
    expect(value(readFileSync(deep, 'utf8'))).toEqual({ a: 2 });
  });

  it('refuses a file that is not JSON (it would garble it further), leaving it as it was', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-edit-'));
    const file = join(dir, 'config.json');
    writeFileSync(file, '{ "a": ');
    expect(() => editConfigFile(file, [{ path: ['b'], value: 1 }])).toThrow(/is not valid JSON \(Invalid JSON at line 1.*\); fix it first/);
    writeFileSync(file, '[1]');
    expect(() => editConfigFile(file, [{ path: ['b'], value: 1 }])).toThrow(/does not hold a JSON object/);
    expect(readFileSync(file, 'utf8')).toBe('[1]');
  });

  it('a symlinked config stays a symlink: its target is rewritten', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-edit-'));
    const real = join(dir, 'dotfiles-config.json');
    writeFileSync(real, '{}\n');
    const link = join(dir, 'config.json');
    symlinkSync(real, link);
    editConfigFile(link, [{ path: ['a'], value: 1 }]);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(value(readFileSync(real, 'utf8'))).toEqual({ a: 1 });
  });

  it('refuses a read-only file, leaving it as it was', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-edit-'));
    const file = join(dir, 'config.json');
    writeFileSync(file, '{}\n', { mode: 0o444 });
    expect(() => editConfigFile(file, [{ path: ['a'], value: 1 }])).toThrow(/config\.json is read-only \(mode 444\)/);
    expect(readFileSync(file, 'utf8')).toBe('{}\n');
  });

  it('a new file is 0600 in a new 0700 folder (it may hold headers or a client secret)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-edit-'));
    const file = join(dir, 'new', 'config.json');
    editConfigFile(file, [{ path: ['mcpServers', 'r'], value: { url: 'https://h/', headers: { Authorization: 'Bearer x' } } }]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'new')).mode & 0o777).toBe(0o700);
  });

  it('a failed write leaves no temp file behind', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-edit-'));
    // A folder where the file should be: the rename fails.
    mkdirSync(join(dir, 'config.json', 'inside'), { recursive: true });
    expect(() => writeAtomically(join(dir, 'config.json'), '{}\n')).toThrow();
    expect(readdirSync(dir)).toEqual(['config.json']);
  });
});
