import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileSecretStore, openSecretStore } from '../../src/util/secrets.js';
import { redact } from '../../src/util/log.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function home(): string {
  const d = mkdtempSync(join(tmpdir(), 'pb-secrets-'));
  dirs.push(d);
  return d;
}

describe('the file secret store', () => {
  it('keeps values in one 0600 file under the home, and removes the file with the last value', async () => {
    const h = home();
    const s = openSecretStore({ env: { PATCHBAY_SECRET_STORE: 'file' }, home: h });
    expect(s.kind).toBe('file');
    await s.set('provider/openai', 'sk-test-0123456789');
    await s.set('mcp/docs/tokens', '{"access_token":"at-abcdefghij"}');
    const file = join(h, 'secrets.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(await s.get('provider/openai')).toBe('sk-test-0123456789');
    expect(await openSecretStore({ env: { PATCHBAY_SECRET_STORE: 'file' }, home: h }).get('mcp/docs/tokens')).toContain('at-abcdefghij');
    await s.delete('provider/openai');
    expect(await s.get('provider/openai')).toBeUndefined();
    expect(existsSync(file)).toBe(true);
    await s.delete('mcp/docs/tokens');
    expect(existsSync(file)).toBe(false);
  });

  it('a file left group-readable is rewritten 0600', async () => {
    const h = home();
    const file = join(h, 'secrets.json');
    writeFileSync(file, '{"a":"old-value-123"}');
    chmodSync(file, 0o644);
    const s = new FileSecretStore(file);
    await s.set('b', 'new-value-456');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ a: 'old-value-123', b: 'new-value-456' });
  });

  it('never overwrites a file it cannot read: a clear error, the file untouched', async () => {
    const h = home();
    const file = join(h, 'secrets.json');
    writeFileSync(file, '{not json');
    const s = new FileSecretStore(file);
    await expect(s.set('k', 'value-12345678')).rejects.toThrow(/Cannot read the secrets file .*secrets\.json/);
    await expect(s.get('k')).rejects.toThrow(/Cannot read the secrets file/);
    expect(readFileSync(file, 'utf8')).toBe('{not json');
  });

  it('without a session bus there is no keychain: the file store, whatever PATCHBAY_SECRET_STORE asks', () => {
    const s = openSecretStore({ env: { PATH: process.env.PATH, PATCHBAY_SECRET_STORE: 'keychain' }, home: home() });
    if (process.platform === 'linux') expect(s.kind).toBe('file');
  });

  it('every value that passes through is scrubbed from log lines, even without a key-like shape', async () => {
    const s = openSecretStore({ env: { PATCHBAY_SECRET_STORE: 'file' }, home: home() });
    await s.set('mcp/x/tokens', 'plainlookingtoken42');
    expect(redact('refresh failed for plainlookingtoken42 at the server')).toBe('refresh failed for [redacted] at the server');
    // Short values are not treated as secrets: scrubbing them would mangle ordinary words.
    await s.set('short', 'abc');
    expect(redact('abc')).toBe('abc');
  });
});
