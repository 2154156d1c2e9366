/**
 * The file secret store shared by several patchbay processes (two editor windows): each change is
 * a read-modify-write of one JSON file, so two processes writing different secrets at once must
 * not drop each other's (src/util/secrets.ts FileSecretStore, under src/util/file-lock.ts). Real
 * processes running the built store.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir, useTempDirs } from './harness.js';

const scratch = useTempDirs();
const STORE = pathToFileURL(resolve(import.meta.dirname, '../../dist/util/secrets.js')).href;
const N = 40;

/** A process that stores N secrets of its own, one at a time. */
function writer(file: string, name: string): Promise<number | null> {
  const script = `const { FileSecretStore } = await import(${JSON.stringify(STORE)});
const s = new FileSecretStore(${JSON.stringify(file)});
for (let i = 0; i < ${N}; i++) await s.set(${JSON.stringify(name)} + '/' + i, 'secret-' + i + '-0123456789');`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'inherit'] });
  return new Promise((r) => child.once('exit', (code) => r(code)));
}

describe('two processes writing the secrets file at once', () => {
  it('keep every secret both wrote', async () => {
    const file = join(scratch(tempDir('pb-secrets-shared-')), 'secrets.json');
    expect(await Promise.all([writer(file, 'a'), writer(file, 'b'), writer(file, 'c')])).toEqual([0, 0, 0]);
    const all = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
    expect(Object.keys(all)).toHaveLength(3 * N);
  });
});
