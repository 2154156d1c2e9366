/** Remote MCP servers: server-everything over Streamable HTTP, and over SSE (the fallback). */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import type { CommandContext } from '../../src/core/chat/commands.js';
import { captureLog, ctx, everythingBin, isAlive, makeHost, text, waitFor, type TestHost } from '../support/mcp-helpers.js';

const log = captureLog();
const children: ChildProcess[] = [];
const hosts: TestHost[] = [];
afterAll(async () => {
  await Promise.all(hosts.map((h) => h.host.dispose()));
  for (const c of children) c.kill('SIGKILL');
});

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

/** server-everything reads PORT (transports/streamableHttp.js, transports/sse.js) and says on stderr when it listens. */
async function everythingOver(transport: 'streamableHttp' | 'sse'): Promise<number> {
  const port = await freePort();
  const child = spawn(process.execPath, [everythingBin, transport], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  await waitFor(() => new RegExp(`port ${port}`).test(err), `server-everything ${transport} to listen`);
  return port;
}

describe('server-everything over Streamable HTTP', () => {
  it('connects with {url}, lists and calls tools, reads resources, runs prompts', async () => {
    const port = await everythingOver('streamableHttp');
    const url = `http://127.0.0.1:${port}/mcp`;
    const t = makeHost({ web: { url, headers: { 'X-Test': 'patchbay' } } });
    hosts.push(t);
    t.host.startAll();
    await waitFor(() => t.host.servers()[0].status === 'running', 'running');
    expect(t.host.servers()[0]).toMatchObject({ command: url, args: [], url });
    expect(log.read()).toMatch(/\[mcp:web\] running \(streamable-http\)/);
    expect(t.tools.get('web__echo')).toMatchObject({ server: 'web', origin: 'mcp' });
    expect(text(await t.tools.get('web__get-sum')!.call({ a: 1, b: 2 }, ctx()))).toBe('The sum of 1 and 2 is 3.');

    const progress: string[] = [];
    const r = await t.tools.get('web__trigger-long-running-operation')!.call({ duration: 0.3, steps: 3 }, ctx({ progress: (p) => progress.push(p) }));
    expect(r.error).toBe(false);
    expect(progress[0]).toBe('web__trigger-long-running-operation: 1/3');

    expect(await t.host.readResource({ server: 'web', uri: 'demo://resource/dynamic/text/1' }, new AbortController().signal)).toMatch(/^Resource 1:/);
    const out = await t.commands.find('web:simple-prompt')!.run([], { signal: new AbortController().signal } as unknown as CommandContext);
    expect(out).toMatchObject({ kind: 'prompt', contextText: 'user: This is a simple prompt without arguments.' });
    expect(t.host.instructions()[0]).toMatch(/^Instructions from MCP server web:\n# Everything Server/);
    expect(t.host.pid('web')).toBeUndefined();

    await t.host.stop('web');
    expect(t.host.servers()[0].status).toBe('stopped');
    expect(t.tools.all()).toEqual([]);
  });
});

describe('server-everything over SSE', () => {
  it('falls back to SSE when Streamable HTTP is refused', async () => {
    const port = await everythingOver('sse');
    const t = makeHost({ old: { url: `http://127.0.0.1:${port}/sse` } });
    hosts.push(t);
    await t.host.start('old');
    expect(t.host.servers()[0].status).toBe('running');
    expect(log.read()).toMatch(/\[mcp:old\] Streamable HTTP failed \(.*\); trying SSE/);
    expect(log.read()).toMatch(/\[mcp:old\] running \(sse\)/);
    expect(text(await t.tools.get('old__echo')!.call({ message: 'via sse' }, ctx()))).toBe('Echo: via sse');
    await t.host.dispose();
    expect(children.every((c) => c.pid && isAlive(c.pid))).toBe(true);
  });
});
