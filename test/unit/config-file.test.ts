/**
 * Config files that are not a regular file or are too large (issue 31 findings 5 and 6): read
 * without blocking, refused with a message, and loading goes on without them. The FIFOs are real
 * (mkfifo) and nothing ever writes to them; the 300 MB file is sparse (truncate: no disk used).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_CONFIG_BYTES, readConfigText } from '../../src/config/config-file.js';
import { loadConfig } from '../../src/config/load.js';
import { readForEdit } from '../../src/config/edit.js';
import { configFingerprint } from '../../src/runtime/workspace-config.js';

let tmp: string;
let home: string;
let ws: string;
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'patchbay-config-file-'));
  home = join(tmp, 'home');
  ws = join(tmp, 'ws');
  mkdirSync(join(home, '.config', 'patchbay'), { recursive: true });
  mkdirSync(join(ws, '.patchbay'), { recursive: true });
});
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

const userFile = () => join(home, '.config', 'patchbay', 'config.json');
const wsFile = () => join(ws, '.patchbay', 'config.json');
const fifo = (path: string) => (execFileSync('mkfifo', [path]), path);
/** A sparse file of `bytes` zeros. */
const sparse = (path: string, bytes: number) => (writeFileSync(path, ''), truncateSync(path, bytes), path);

describe('readConfigText', () => {
  it('reads a regular file and says when there is none', () => {
    writeFileSync(userFile(), '{"a":1}');
    expect(readConfigText(userFile())).toEqual({ kind: 'text', text: '{"a":1}' });
    expect(readConfigText(join(tmp, 'nope.json'))).toEqual({ kind: 'missing' });
  });

  it('refuses a FIFO nobody writes to, at once, and a directory', () => {
    expect(readConfigText(fifo(userFile()))).toEqual({ kind: 'refused', message: 'is not a regular file (a FIFO, socket or device); ignored' });
    expect(readConfigText(join(ws, '.patchbay'))).toEqual({ kind: 'refused', message: 'is a directory; ignored' });
  });

  it('refuses a file over the 4 MB cap without reading it, and takes one at the cap', () => {
    expect(MAX_CONFIG_BYTES).toBe(4 * 1024 * 1024);
    expect(readConfigText(sparse(userFile(), 300 * 1024 * 1024))).toEqual({ kind: 'refused', message: 'is 300 MB, over the 4 MB a config file may have; ignored' });
    const atCap = readConfigText(sparse(wsFile(), MAX_CONFIG_BYTES));
    expect(atCap.kind === 'text' && atCap.text.length).toBe(MAX_CONFIG_BYTES);
  });

  it('says the size in the unit that fits', () => {
    writeFileSync(userFile(), 'x'.repeat(100));
    expect(readConfigText(userFile(), 10)).toEqual({ kind: 'refused', message: 'is 100 bytes, over the 10 bytes a config file may have; ignored' });
  });
});

describe('loading with such a file', () => {
  for (const [name, make, message] of [
    ['a FIFO', (p: string) => fifo(p), 'is not a regular file (a FIFO, socket or device); ignored'],
    ['a 300 MB file', (p: string) => sparse(p, 300 * 1024 * 1024), 'is 300 MB, over the 4 MB a config file may have; ignored'],
  ] as const) {
    it(`${name} as the user config is reported with its path; the workspace file still applies`, () => {
      make(userFile());
      writeFileSync(wsFile(), JSON.stringify({ welcomeMessage: 'from the workspace' }));
      const r = loadConfig({ roots: [ws], env: {}, homeDir: home });
      expect(r.errors).toContainEqual({ source: userFile(), key: '', message });
      expect(r.config.welcomeMessage).toBe('from the workspace');
      expect(r.sources).toEqual([wsFile()]);
    });

    it(`${name} as the workspace config is reported; the user file still applies`, () => {
      writeFileSync(userFile(), JSON.stringify({ welcomeMessage: 'from the user' }));
      make(wsFile());
      const r = loadConfig({ roots: [ws], env: {}, homeDir: home });
      expect(r.errors).toContainEqual({ source: wsFile(), key: '', message });
      expect(r.config.welcomeMessage).toBe('from the user');
      expect(r.workspaces).toEqual([]);
    });

    it(`${name}: a reload's fingerprint says why without its content, and an edit from the editor is refused`, () => {
      make(wsFile());
      expect(JSON.parse(configFingerprint([wsFile()]))).toEqual([{ file: wsFile(), text: null, refused: message }]);
      expect(() => readForEdit(wsFile())).toThrow(`${wsFile()} ${message.replace('; ignored', '')}`);
    });
  }
});
