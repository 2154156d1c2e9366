/**
 * The gateway's port is a preference: when it is taken (another program, or a second patchbay
 * for the terminal beside the editor's) the server listens on a free port, says so in its log,
 * and writes that address to the address file, where providers find it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createProvider } from '../../src/provider/index.js';
import { EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

/** Starts a server whose gateway prefers `port`, opens one chat, and returns the gateway address it wrote. */
async function boot(port: number): Promise<{ p: EcaProc; home: string; chatId: string; address: string }> {
  const home = tempDir();
  const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url, 'openai-chat', { gateway: { port }, toolCall: { approval: { byDefault: 'allow' } } }) }));
  await p.initialize(workspace());
  await p.waitFor((m) => m.method === 'config/updated');
  const file = join(home, '.patchbay', 'gateway', 'address');
  const deadline = Date.now() + 10_000;
  while (!existsSync(file) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const address = readFileSync(file, 'utf8').trim();
  llm().script([{ text: 'hello' }]);
  const chatId = (await p.request('chat/prompt', { message: 'start' })).result.chatId as string;
  await p.turnDone(chatId);
  return { p, home, chatId, address };
}

const portOf = (address: string): number => Number(/^ws:\/\/127\.0\.0\.1:(\d+)$/.exec(address)?.[1]);

/** An SDK provider that finds the gateway through the server's address and token files only. */
async function providerConnects(p: EcaProc, home: string, chatId: string): Promise<void> {
  const provider = createProvider({
    name: 'port-check',
    env: { PATCHBAY_HOME: join(home, '.patchbay') },
    tools: [{ name: 'ping', description: 'Answers pong', parameters: { type: 'object', properties: {} }, handler: () => 'pong' }],
  });
  provider.on('error', () => {}); // reported by connect() below
  try {
    await expect(provider.connect()).resolves.toMatchObject({ sessionId: chatId });
    const up = await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params?.name === 'port-check' && m.params?.status === 'running');
    expect(up.params.tools.map((t: { name: string }) => t.name)).toEqual(['port-check__ping']);
  } finally {
    await provider.close();
  }
}

describe('the gateway port', () => {
  it('a port another program holds: the server listens on a free one, logs it, and a provider finds it', async () => {
    const squatter = createServer();
    await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', r));
    const taken = (squatter.address() as AddressInfo).port;
    try {
      const { p, home, chatId, address } = await boot(taken);
      const port = portOf(address);
      expect(port).toBeGreaterThan(0);
      expect(port).not.toBe(taken);
      expect(p.stderr).toContain(`port ${taken} is in use (another patchbay?); listening on port ${port} instead`);
      await providerConnects(p, home, chatId);
    } finally {
      await new Promise((r) => squatter.close(r));
    }
  }, 60_000);

  it('a second patchbay preferring the port the first one holds comes up beside it, each with its own address', async () => {
    const first = await boot(0);
    const held = portOf(first.address);
    const second = await boot(held);
    const port = portOf(second.address);
    expect(port).toBeGreaterThan(0);
    expect(port).not.toBe(held);
    await providerConnects(second.p, second.home, second.chatId);
    await providerConnects(first.p, first.home, first.chatId);
  }, 60_000);
});
