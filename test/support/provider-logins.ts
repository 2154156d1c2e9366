/**
 * What the ProviderLogins unit tests share: one fake authorization server for the file
 * (test/fixtures/fake-oauth.ts, reset after each test), and the logins and temp dirs a test made,
 * disposed and removed after it.
 */
import { rmSync } from 'node:fs';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { ProviderLogins } from '../../src/runtime/provider-logins.js';
import { FakeAuthServer } from '../fixtures/fake-oauth.js';

export interface LoginsFixture {
  /** The fake authorization server (started before the file's first test). */
  readonly auth: FakeAuthServer;
  /** Temp dirs to remove after the test. */
  readonly dirs: string[];
  /** Logins to dispose after the test. */
  readonly instances: ProviderLogins[];
}

export function useLoginsFixture(): LoginsFixture {
  let auth: FakeAuthServer | undefined;
  const dirs: string[] = [];
  const instances: ProviderLogins[] = [];
  beforeAll(async () => {
    auth = await FakeAuthServer.start();
  });
  afterAll(() => auth?.close());
  afterEach(() => {
    for (const l of instances.splice(0)) l.dispose();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    auth?.reset();
  });
  return {
    get auth() {
      if (!auth) throw new Error('the fake authorization server starts in beforeAll');
      return auth;
    },
    dirs,
    instances,
  };
}
