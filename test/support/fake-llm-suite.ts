/**
 * One FakeLlm (test/fixtures/fake-llm.ts) per test file: started before the first test,
 * closed after the last.
 */
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { FakeLlm } from '../fixtures/fake-llm.js';

/**
 * Registers the hooks and returns the running server (call it inside tests and hooks).
 * `reset`: when FakeLlm.reset() clears what a test left (queued replies, recorded requests,
 * `onRequest`, models): before each test (the default), after each, or never.
 */
export function useFakeLlm(opts: { reset?: 'beforeEach' | 'afterEach' | 'never' } = {}): () => FakeLlm {
  let fake: FakeLlm | undefined;
  const get = (): FakeLlm => {
    if (!fake) throw new Error('the fake LLM is not running (use it inside a test or hook)');
    return fake;
  };
  beforeAll(async () => {
    fake = await FakeLlm.start();
  });
  afterAll(async () => {
    await fake?.close();
  });
  const reset = opts.reset ?? 'beforeEach';
  if (reset === 'beforeEach') beforeEach(() => get().reset());
  else if (reset === 'afterEach') afterEach(() => get().reset());
  return get;
}
