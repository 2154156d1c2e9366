/**
 * Shared by the provider-login tests: a fake authorization server for the file, a provider
 * `acme` (OpenAI chat wire, the fake LLM) whose `login` points at it, and the checks that a
 * loopback listener is gone.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { FakeAuthServer } from '../fixtures/fake-oauth.js';
import { ECA, EcaProc, tempDir, workspace, type Msg } from './harness.js';
import type { FakeLlm } from '../fixtures/fake-llm.js';

export function useFakeAuth(): () => FakeAuthServer {
  let auth: FakeAuthServer | undefined;
  beforeAll(async () => {
    auth = await FakeAuthServer.start();
  });
  afterAll(async () => {
    await auth?.close();
  });
  afterEach(() => auth?.reset());
  return () => auth!;
}

export interface Booted {
  p: EcaProc;
  home: string;
  /** PATCHBAY_HOME */
  pbHome: string;
  config: Record<string, unknown>;
}

/** A server whose provider `acme` logs in at `auth` (login settings over `login`); secrets in the 0600 file. */
export async function bootLogin(o: {
  llm: FakeLlm;
  auth: FakeAuthServer;
  track: (p: EcaProc) => EcaProc;
  scratch: (d: string) => string;
  login?: Record<string, unknown>;
  home?: string;
  key?: string;
  /** The provider's wire format (default `openai-chat`). */
  api?: 'openai-chat' | 'anthropic';
  /** More environment for the server. */
  env?: Record<string, string>;
}): Promise<Booted> {
  const home = o.home ?? o.scratch(tempDir('pb-login-'));
  const config = {
    logLevel: 'debug',
    providers: {
      acme: { api: o.api ?? 'openai-chat', url: o.api === 'anthropic' ? o.llm.url : `${o.llm.url}/v1`, models: { m1: {} }, login: o.auth.loginConfig(o.login), ...(o.key ? { key: o.key } : {}) },
    },
    defaultModel: 'acme/m1',
    chat: { generateTitles: false, maxRetries: 0 },
  };
  const p = o.track(new EcaProc({ home, config, env: { PATCHBAY_SECRET_STORE: 'file', ...o.env } }));
  await p.initialize(o.scratch(workspace()));
  // Answered after model discovery, which loads the stored logins.
  await p.request(ECA.providersList, {});
  return { p, home, pbHome: join(home, '.patchbay'), config };
}

/** The next `providers/updated` for `id` (after message index `from`) that matches. */
export function providerUpdated(p: EcaProc, id: string, pred: (s: any) => boolean, from = 0, timeoutMs = 15_000): Promise<Msg> {
  return p.waitFor((m) => m.method === ECA.providersUpdated.method && m.params.id === id && pred(m.params), `providers/updated for ${id}`, timeoutMs, from);
}

/** Prompts acme/m1 once and returns the Authorization header the LLM saw. */
export async function bearerSeen(p: EcaProc, llm: FakeLlm): Promise<string | undefined> {
  const before = llm.requests.length;
  const r = await p.request(ECA.chatPrompt, { message: 'hi', model: 'acme/m1' });
  await p.turnDone(r.result.chatId);
  const req = llm.requests.slice(before).find((x) => x.path.includes('/chat/completions'));
  return req?.headers.authorization as string | undefined;
}

/** True when nothing accepts connections on 127.0.0.1:port (connect is refused). */
export function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(false)));
    s.once('error', () => resolve(true));
  });
}

/** The TCP ports a process listens on, as `ss -ltnp` reports them. */
export function listeningPorts(pid: number): number[] {
  const out = execFileSync('ss', ['-ltnpH'], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((l) => l.includes(`pid=${pid},`))
    .flatMap((l) => {
      const m = /:(\d+)$/.exec(l.trim().split(/\s+/)[3] ?? '');
      return m ? [Number(m[1])] : [];
    });
}

export function portOf(url: string): number {
  return Number(new URL(url).port);
}

export function storedSecrets(pbHome: string): string {
  const f = join(pbHome, 'secrets.json');
  return existsSync(f) ? readFileSync(f, 'utf8') : '';
}
