/**
 * A provider that cannot be reached, over the built `patchbay server` and `patchbay chat`:
 * a refused connection fails at once (no retry) with the URL and the cause; a connection the
 * server drops is retried; a 503 then 200 shows the retry as progress in the chat.
 */
import { createServer, type AddressInfo, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { cliConfig, EcaProc, fakeProviderConfig, refusedPort, runPatchbay, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

/** Accepts every connection and destroys it at once, counting them. */
async function socketKiller(): Promise<{ server: Server; port: number; connections: () => number }> {
  let n = 0;
  const server = createServer((sock) => {
    n++;
    sock.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port, connections: () => n };
}

function providerAt(url: string, maxRetries: number): Record<string, unknown> {
  const cfg = fakeProviderConfig('unused');
  return { ...cfg, providers: { fake: { api: 'openai-chat', url, key: 'test-key', models: { m1: {} } } }, chat: { generateTitles: false, maxRetries } };
}

const progressTexts = (p: EcaProc, chatId: string): string[] => p.contents(chatId).flatMap((c) => (c.content.type === 'progress' && c.content.state === 'running' ? [c.content.text as string] : []));

async function promptOnce(p: EcaProc): Promise<string> {
  await p.initialize(workspace());
  const res = await p.request('chat/prompt', { message: 'hi' });
  const chatId = res.result.chatId as string;
  await p.turnDone(chatId, 1, 60_000);
  return chatId;
}

describe('an unreachable provider', () => {
  it('a refused connection is not retried: the error names the url and says "connection refused"', async () => {
    const port = await refusedPort();
    const url = `http://127.0.0.1:${port}/v1`;
    const p = track(new EcaProc({ home: tempDir(), config: providerAt(url, 4) }));
    const chatId = await promptOnce(p);
    const error = p.text(chatId, 'system');
    expect(error).toContain(`Error from fake/m1: Could not reach ${url} (connection refused). Check the provider's url`);
    expect(error).not.toContain('test-key');
    // No retry: no "Retrying in …" progress was ever shown.
    expect(progressTexts(p, chatId).filter((t) => /retr/i.test(t))).toEqual([]);
  }, 60_000);

  it('a connection the server drops is retried, with progress for each retry (the control for the test above)', async () => {
    const killer = await socketKiller();
    try {
      const url = `http://127.0.0.1:${killer.port}/v1`;
      const p = track(new EcaProc({ home: tempDir(), config: providerAt(url, 1) }));
      const chatId = await promptOnce(p);
      expect(killer.connections()).toBe(2);
      expect(progressTexts(p, chatId)).toContainEqual(expect.stringMatching(/^Retrying in [\d.]+ s \(attempt 2 of 2\): Lost the connection to http:\/\/127\.0\.0\.1:\d+\/v1 \(/));
      expect(p.text(chatId, 'system')).toContain(`Error from fake/m1: Lost the connection to ${url}`);
    } finally {
      await new Promise((r) => killer.server.close(r));
    }
  }, 60_000);

  it('a 503 then a 200: the chat shows "Retrying in … (attempt 2 of 4): … 503 …" and then the answer', async () => {
    llm().script({ status: 503, headers: { 'retry-after-ms': '300' } }, [{ text: 'answer after the retry' }]);
    const p = track(new EcaProc({ home: tempDir(), config: fakeProviderConfig(llm().url) }));
    const chatId = await promptOnce(p);
    expect(progressTexts(p, chatId)).toContain('Retrying in 0.3 s (attempt 2 of 4): fake request failed (HTTP 503): fake 503: Service Unavailable');
    expect(p.text(chatId)).toBe('answer after the retry');
    expect(llm().requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(2);
  }, 60_000);
});

describe('patchbay chat with an unreachable provider', () => {
  it('prints the cause and the url on stderr and exits 1; a retry is printed even without a terminal', async () => {
    const port = await refusedPort();
    const home = tempDir();
    const run = (config: Record<string, unknown>) => runPatchbay(['chat', 'hi'], { home, cwd: workspace(), env: { PATCHBAY_CONFIG: cliConfig(config) }, stdin: null, timeoutMs: 0, until: 'close' });

    const refused = await run(providerAt(`http://127.0.0.1:${port}/v1`, 4));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`Could not reach http://127.0.0.1:${port}/v1 (connection refused)`);
    expect(refused.stderr).not.toMatch(/Retrying/);

    llm().script({ status: 503, headers: { 'retry-after-ms': '200' } }, [{ text: 'fine now' }]);
    const retried = await run(fakeProviderConfig(llm().url));
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stderr).toContain('Retrying in 0.2 s (attempt 2 of 4): fake request failed (HTTP 503)');
    expect(retried.stdout).toBe('fine now\n');
  }, 60_000);
});
