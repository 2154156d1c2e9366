/**
 * The keychain half of src/util/secrets.ts against a real Secret Service: gnome-keyring in a
 * private D-Bus session (dbus-run-session), driven through libsecret's `secret-tool`, as on a
 * Linux desktop. Skipped where those are not installed (.ci/run installs them).
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir, useTempDirs } from './harness.js';

const ROOT = resolve(import.meta.dirname, '../..');
const has = (exe: string): boolean => spawnSync('sh', ['-c', `command -v ${exe}`]).status === 0;
const usable = process.platform === 'linux' && ['dbus-run-session', 'gnome-keyring-daemon', 'secret-tool'].every(has);

/** Runs `script` with Node in a private D-Bus session whose gnome-keyring is unlocked (password `pw`). */
function inKeyring(home: string, pbHome: string, script: string): SpawnSyncReturns<string> {
  return spawnSync('dbus-run-session', ['--', 'sh', '-c', `printf pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null && exec "${process.execPath}" "${script}"`], {
    env: { PATH: process.env.PATH, HOME: home, XDG_DATA_HOME: join(home, 'data'), PATCHBAY_HOME: pbHome },
    encoding: 'utf8',
    timeout: 30_000,
  });
}

describe.skipIf(!usable)('secrets in the Secret Service (gnome-keyring over D-Bus)', () => {
  const scratch = useTempDirs();

  it('stores, reads and deletes through the keychain; nothing reaches the fallback file', () => {
    const home = scratch(tempDir('pb-keyring-'));
    const script = join(home, 'drive.mjs');
    writeFileSync(
      script,
      `import { openSecretStore } from ${JSON.stringify(join(ROOT, 'dist/util/secrets.js'))};
import { execFileSync } from 'node:child_process';
const s = openSecretStore({ env: process.env, home: process.env.PATCHBAY_HOME });
const out = { kind: s.kind, where: s.where };
await s.set('provider/anthropic', 'sk-ant-keyring-0123456789');
out.read = await s.get('provider/anthropic');
out.viaTool = execFileSync('secret-tool', ['lookup', 'service', 'patchbay', 'account', 'provider/anthropic'], { encoding: 'utf8' });
out.kindAfter = s.kind;
await s.delete('provider/anthropic');
out.afterDelete = (await s.get('provider/anthropic')) ?? null;
console.log(JSON.stringify(out));
`,
    );
    const pbHome = join(home, '.patchbay');
    const r = inKeyring(home, pbHome, script);
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    expect(out).toMatchObject({ kind: 'keychain', kindAfter: 'keychain', read: 'sk-ant-keyring-0123456789', viaTool: 'sk-ant-keyring-0123456789', afterDelete: null });
    expect(existsSync(join(pbHome, 'secrets.json'))).toBe(false);
    // dbus-run-session ends the bus, and gnome-keyring goes with it: nothing left running.
    const left = spawnSync('pgrep', ['-f', `gnome-keyring-daemon.*`], { encoding: 'utf8' });
    const ours = left.stdout
      .split('\n')
      .filter(Boolean)
      .filter((pid) => {
        try {
          return spawnSync('cat', [`/proc/${pid}/environ`], { encoding: 'utf8' }).stdout.includes(home);
        } catch {
          return false;
        }
      });
    expect(ours).toEqual([]);
  });

  it('a provider login (API key) goes to the keychain, is found by the next start, and a logout clears it', () => {
    const home = scratch(tempDir('pb-keyring-login-'));
    const pbHome = join(home, '.patchbay');
    const script = join(home, 'login.mjs');
    writeFileSync(
      script,
      `import { openSecretStore } from ${JSON.stringify(join(ROOT, 'dist/util/secrets.js'))};
import { ProviderLogins } from ${JSON.stringify(join(ROOT, 'dist/runtime/provider-logins.js'))};
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
mkdirSync(process.env.PATCHBAY_HOME, { recursive: true });
const make = () => new ProviderLogins({
  store: openSecretStore({ env: process.env, home: process.env.PATCHBAY_HOME }),
  indexFile: process.env.PATCHBAY_HOME + '/logins.json',
  providers: () => ({ acme: { api: 'openai-chat', url: 'http://127.0.0.1:9/v1' } }),
  known: () => ['openai', 'acme'],
  overriddenBy: () => undefined,
  changed: async () => {},
  notice: () => {},
});
const first = make();
await first.load();
const out = { step: await first.input('acme', { 'api-key': 'acme-keyring-key-0123456789' }) };
out.viaTool = execFileSync('secret-tool', ['lookup', 'service', 'patchbay', 'account', 'provider/acme'], { encoding: 'utf8' });
const second = make();
await second.load();
out.keys = second.keys();
out.kind = second.storeKind;
await second.logout('acme');
const third = make();
await third.load();
out.afterLogout = third.keys();
console.log(JSON.stringify(out));
`,
    );
    const r = inKeyring(home, pbHome, script);
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    expect(out.step).toEqual({ kind: 'done' });
    expect(JSON.parse(out.viaTool as string)).toEqual({ type: 'api-key', key: 'acme-keyring-key-0123456789' });
    expect(out.keys).toEqual({ acme: 'acme-keyring-key-0123456789' });
    expect(out.kind).toMatch(/^keychain \(/);
    expect(out.afterLogout).toEqual({});
    expect(existsSync(join(pbHome, 'secrets.json'))).toBe(false);
  });
});
