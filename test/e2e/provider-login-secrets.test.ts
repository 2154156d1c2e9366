/**
 * No key, access token or refresh token a login used appears anywhere but the secret store: not
 * in the server log (at debug level), not in the chats database (the SQLite file's bytes, WAL
 * included), not in anything sent to the editor, not in `patchbay doctor`'s output, which does
 * say how each provider is authenticated and where secrets are kept.
 * Flows as eca-emacs drives them (eca-providers.el `eca-providers--handle-login-response`).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ECA, runPatchbay, useFakeLlmSuite, useTempDirs } from './harness.js';
import { bearerSeen, bootLogin, providerUpdated, storedSecrets, useFakeAuth } from './login-support.js';

const scratch = useTempDirs();
const { llm, track } = useFakeLlmSuite();
const auth = useFakeAuth();

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));
}

describe('secrets stay secret', () => {
  it('the log, the chats database, the wire and doctor hold none of the keys and tokens used', async () => {
    // The first token (30 s) is refreshed before the next prompt: two access tokens and two refresh tokens.
    auth().expiresIns = [30, 7200];
    const { p, home, pbHome, config } = await bootLogin({ llm: llm(), auth: auth(), track, scratch });
    const apiKey = 'typed-api-key-6f1c2d9e8b7a';

    await p.request(ECA.providersLogin, { provider: 'acme', method: 'api-key' });
    await p.request(ECA.providersLoginInput, { provider: 'acme', data: { 'api-key': apiKey } });
    expect(await bearerSeen(p, llm())).toBe(`Bearer ${apiKey}`);

    // A failed exchange (its error goes to the log and the editor).
    auth().tokenModes = ['invalid_grant'];
    const failed = await p.request(ECA.providersLogin, { provider: 'acme', method: 'paste' });
    const location = new URL((await fetch(failed.result.url, { redirect: 'manual' })).headers.get('location')!);
    const pasted = location.searchParams.get('code')!;
    expect((await p.request(ECA.providersLoginInput, { provider: 'acme', data: { code: pasted } })).error).toBeDefined();

    const from = p.messages.length;
    const res = await p.request(ECA.providersLogin, { provider: 'acme', method: 'browser' });
    await fetch(res.result.url);
    await providerUpdated(p, 'acme', (s) => s.auth.type === 'oauth', from);
    expect(await bearerSeen(p, llm())).toBe(`Bearer ${auth().issued[2]}`);
    const secrets = [apiKey, ...auth().issued];
    expect(secrets.length).toBeGreaterThanOrEqual(5);
    // The chats are in the store: a prompt and its answer, with the key used for it.
    const wire = JSON.stringify(p.messages);
    await p.stop();

    const doctor = await runPatchbay(['doctor'], { home, env: { PATCHBAY_CONFIG: JSON.stringify(config), PATCHBAY_SECRET_STORE: 'file' } });
    expect(doctor.stdout).toContain(`Provider auth (secrets in file (${join(pbHome, 'secrets.json')})):`);
    expect(doctor.stdout).toMatch(/ {2}- acme: expiring, oauth from login \(browser\), expires \d{4}-/);
    expect(doctor.stdout).toMatch(/ {2}- openai: unauthenticated/);

    const logs = filesUnder(join(pbHome, 'logs')).map((f) => readFileSync(f, 'utf8'));
    expect(logs.join('')).toContain('refreshed the login to "acme"');
    const db = filesUnder(pbHome)
      .filter((f) => /patchbay\.db/.test(f))
      .map((f) => readFileSync(f).toString('latin1'));
    expect(db.join('')).toContain('hi');
    // Where they are meant to be: the 0600 secret store (the latest login only).
    expect(storedSecrets(pbHome)).toContain(auth().issued[2]);

    const places: Record<string, string> = { log: logs.join('\n'), db: db.join('\n'), wire, doctor: doctor.output, stderr: p.stderr };
    for (const [where, text] of Object.entries(places)) {
      for (const s of [...secrets, pasted]) expect(text.includes(s), `${where} holds a secret`).toBe(false);
    }
  }, 60_000);
});
