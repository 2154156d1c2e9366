/**
 * What the MCP OAuth unit tests share: the OAuth-protected MCP server fixture
 * (test/fixtures/mcp-oauth.mjs, stopped after each test) and a user who approves every sign-in
 * at once, the way the conformance suite's example client does (fetch the authorization URL
 * without following the redirect, read the code from `Location`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterEach } from 'vitest';
import type { OAuthUser } from '../../src/peers/mcp/oauth-provider.js';
import { fixture } from './mcp-helpers.js';

/** What the fixture prints when it listens: its MCP URL, its base, and `other` (a second origin) when asked for. */
export interface ProtectedServer {
  url: string;
  base: string;
  other: string;
}

/** `protectedServer(...flags)` starts the fixture with those flags; each is stopped after its test. */
export function useProtectedServers(): (...args: string[]) => Promise<ProtectedServer> {
  const procs: ChildProcess[] = [];
  afterEach(() => {
    for (const p of procs.splice(0)) p.kill('SIGTERM');
  });
  return async (...args) => {
    const proc = spawn(process.execPath, [fixture('mcp-oauth.mjs'), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    procs.push(proc);
    const line = await new Promise<string>((resolve) => createInterface({ input: proc.stdout! }).once('line', resolve));
    return JSON.parse(line) as ProtectedServer;
  };
}

/** Approves at once: fetches the authorization URL and reads the code from the redirect. */
export function approvingUser(redirectUrl = 'http://127.0.0.1:1/auth/callback'): OAuthUser & { opened: number } {
  let pending: Promise<string> | undefined;
  const user = {
    opened: 0,
    redirectUrl,
    authorize(url: URL) {
      user.opened++;
      pending = fetch(url, { redirect: 'manual' }).then((r) => new URL(r.headers.get('location')!).searchParams.get('code')!);
      return Promise.resolve();
    },
    code: () => pending!,
  };
  return user;
}
