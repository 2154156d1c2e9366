/**
 * Workspace.refreshLogins: a running workspace (what `patchbay acp` serves; the ACP façade calls
 * this from `authenticate` after the client ran `patchbay login` in a terminal, ACP "terminal
 * auth", agentclientprotocol/registry AUTHENTICATION.md) takes a login that a separate
 * `patchbay login` process stored in the shared secret store, and a logout made there too.
 * The workspace is built in-process (no ECA method triggers this); the login is the real binary.
 */
import { realpathSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Workspace } from '../../src/runtime/workspace.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { cliConfig, cliEnv, runPatchbay, tempDir, useTempDirs } from './harness.js';
import { useFakeAuth } from './login-support.js';

const scratch = useTempDirs();
const llm = useFakeLlm();
const auth = useFakeAuth();
const KEY = 'sk-test-refresh-51d0e2';

/**
 * `openai` (built in: no models without a key) and `acme` (configured: its models are listed before
 * it has a key; OAuth at the fake authorization server), both on the fake LLM.
 */
function config(): string {
  return cliConfig({
    providers: {
      openai: { url: `${llm().url}/v1`, models: { m1: {} } },
      acme: { api: 'openai-chat', url: `${llm().url}/v1`, models: { m1: {} }, login: auth().loginConfig() },
    },
    chat: { generateTitles: false, maxRetries: 0 },
  });
}

async function boot(home: string, changes: Array<[string, boolean]>): Promise<Workspace> {
  const env = cliEnv(home, { PATCHBAY_CONFIG: config(), PATCHBAY_SECRET_STORE: 'file' });
  const ws = await Workspace.create({
    roots: [realpathSync(scratch(tempDir('pb-refresh-ws-')))],
    env,
    frontEnd: { canAsk: false, canShowDiffs: false },
    events: { event() {}, opened() {}, cleared() {}, deleted() {}, showMessage() {} },
    logLevel: 'error',
    onProviderChanged: (_ws, id, models) => changes.push([id, models]),
  });
  await ws.modelsReady;
  return ws;
}

function patchbay(home: string, args: string[], stdin = '') {
  return runPatchbay(args, { home, env: { PATCHBAY_CONFIG: config(), PATCHBAY_SECRET_STORE: 'file' }, stdin });
}

const ids = (ws: Workspace, provider: string): string[] => ws.models.filter((m) => m.provider === provider).map((m) => m.id);

describe('Workspace.refreshLogins', () => {
  it('takes a login another process stored: the models it unlocks appear, and true is returned once', { timeout: 60_000 }, async () => {
    const home = scratch(tempDir('pb-refresh-home-'));
    const changes: Array<[string, boolean]> = [];
    const ws = await boot(home, changes);
    try {
      expect(ids(ws, 'openai')).toEqual([]);
      expect(await ws.refreshLogins()).toBe(false);

      const r = await patchbay(home, ['login', 'openai', '--method', 'api-key'], `${KEY}\n`);
      expect(r.code, r.stderr).toBe(0);
      // Not seen until asked: the workspace loaded the logins at start.
      expect(ids(ws, 'openai')).toEqual([]);

      expect(await ws.refreshLogins()).toBe(true);
      expect(ids(ws, 'openai')).toContain('openai/m1');
      expect(ws.models.find((m) => m.id === 'openai/m1')?.key).toBe(KEY);
      expect(ws.providerAuth('openai')).toMatchObject({ status: 'authenticated', source: 'login', type: 'api-key' });
      // The front end hears of it as of any login (ECA providers/updated).
      expect(changes).toEqual([['openai', true]]);
      expect(await ws.refreshLogins()).toBe(false);
      expect(changes).toHaveLength(1);

      // A logout in another process is taken too: the models go again.
      expect((await patchbay(home, ['login', '--logout', 'openai'])).code).toBe(0);
      expect(await ws.refreshLogins()).toBe(false);
      expect(ids(ws, 'openai')).toEqual([]);
      expect(ws.providerAuth('openai').status).toBe('unauthenticated');
    } finally {
      await ws.dispose();
    }
  });

  it('a configured provider whose models were listed without a key: its new login counts as a model becoming available', { timeout: 60_000 }, async () => {
    const home = scratch(tempDir('pb-refresh-home-'));
    const ws = await boot(home, []);
    try {
      expect(ids(ws, 'acme')).toEqual(['acme/m1']);
      expect(ws.providerAuth('acme').status).toBe('unauthenticated');
      expect((await patchbay(home, ['login', 'acme', '--method', 'api-key'], `${KEY}\n`)).code).toBe(0);
      expect(await ws.refreshLogins()).toBe(true);
      expect(ws.models.find((m) => m.id === 'acme/m1')?.key).toBe(KEY);
      expect(ws.providerAuth('acme')).toMatchObject({ status: 'authenticated', source: 'login' });
    } finally {
      await ws.dispose();
    }
  });

  it('an OAuth login (device code) made by another process is taken with its tokens', { timeout: 60_000 }, async () => {
    const home = scratch(tempDir('pb-refresh-home-'));
    const ws = await boot(home, []);
    try {
      const r = await patchbay(home, ['login', 'acme', '--method', 'device']);
      expect(r.code, r.stderr).toBe(0);
      expect(await ws.refreshLogins()).toBe(true);
      expect(ws.providerAuth('acme')).toMatchObject({ type: 'oauth', source: 'login', mode: 'device' });
      expect(auth().issued).toContain(ws.models.find((m) => m.id === 'acme/m1')?.key);
    } finally {
      await ws.dispose();
    }
  });
});
