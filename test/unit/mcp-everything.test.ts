/**
 * The MCP host against the real reference server (@modelcontextprotocol/server-everything) over stdio.
 */
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommandContext } from '../../src/core/chat/commands.js';
import { captureLog, ctx, everythingBin, isAlive, makeHost, repo, text, waitFor, type TestHost } from '../support/mcp-helpers.js';

const log = captureLog();
let t: TestHost;
const cmdCtx = (signal = new AbortController().signal) => ({ signal }) as unknown as CommandContext;

beforeAll(async () => {
  t = makeHost({ everything: { command: process.execPath, args: [everythingBin, 'stdio'] } });
  t.host.startAll();
  await waitFor(() => t.host.servers()[0].status === 'running', 'everything to run');
});

afterAll(async () => {
  await t?.host.dispose();
});

describe('server-everything over stdio', () => {
  it('reports starting then running, with the command line and tools', () => {
    expect(t.statuses('everything').slice(0, 2)).toEqual(['starting', 'running']);
    const info = t.host.servers()[0];
    expect(info).toMatchObject({ name: 'everything', command: process.execPath, args: [everythingBin, 'stdio'], status: 'running', restarts: 0 });
    expect(info.lastError).toBeUndefined();
    expect(info.tools.map((x) => x.name)).toEqual(expect.arrayContaining(['echo', 'get-sum']));
    expect(info.tools.find((x) => x.name === 'echo')?.parameters).toMatchObject({ type: 'object', properties: { message: { type: 'string' } } });
  });

  it('registers its tools as internal mcp Tools under mcp:everything', () => {
    const names = t.tools.all().map((x) => x.name);
    expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum', 'get-tiny-image', 'trigger-long-running-operation', 'toggle-subscriber-updates']));
    const echo = t.tools.get('everything__echo')!;
    expect(echo).toMatchObject({ name: 'echo', server: 'everything', origin: 'mcp', readOnly: false, mutates: false });
    expect(echo.inputSchema).toMatchObject({ type: 'object', required: ['message'] });
    // readOnlyHint: false → mutates (hidden from the plan agent).
    expect(t.tools.get('everything__toggle-subscriber-updates')).toMatchObject({ readOnly: false, mutates: true });
  });

  it('picks up tools registered after initialize (tools/list_changed) and answers roots/list with file URIs', async () => {
    // server-everything registers get-roots-list once it knows the client declared roots.
    const tool = await waitFor(() => t.tools.get('everything__get-roots-list'), 'get-roots-list');
    expect(t.events.some((e) => e.status === 'running' && e.tools.some((x) => x.name === 'get-roots-list'))).toBe(true);
    const out = text(await tool.call({}, ctx()));
    expect(out).toContain(pathToFileURL(repo).href);
  });

  it('calls echo and get-sum', async () => {
    const echo = await t.tools.get('everything__echo')!.call({ message: 'hello mcp' }, ctx());
    expect(echo).toEqual({ error: false, outputs: [{ type: 'text', text: 'Echo: hello mcp' }] });
    const sum = await t.tools.get('everything__get-sum')!.call({ a: 2, b: 40 }, ctx());
    expect(sum.error).toBe(false);
    expect(text(sum)).toBe('The sum of 2 and 40 is 42.');
  });

  it('turns invalid arguments into an error result, not a throw', async () => {
    const r = await t.tools.get('everything__get-sum')!.call({ a: 'x' }, ctx());
    expect(r.error).toBe(true);
    expect(text(r)).toMatch(/invalid|expected number/i);
  });

  it('returns get-tiny-image as an image output', async () => {
    const r = await t.tools.get('everything__get-tiny-image')!.call({}, ctx());
    expect(r.error).toBe(false);
    const img = r.outputs.find((o) => o.type === 'image');
    expect(img).toMatchObject({ type: 'image', mimeType: 'image/png' });
    expect(
      Buffer.from((img as { data: string }).data, 'base64')
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
    expect(r.outputs.filter((o) => o.type === 'text').length).toBe(2);
  });

  it('reports progress of trigger-long-running-operation through ctx.progress', async () => {
    const progress: string[] = [];
    const r = await t.tools.get('everything__trigger-long-running-operation')!.call({ duration: 0.4, steps: 4 }, ctx({ progress: (p) => progress.push(p) }));
    expect(r.error).toBe(false);
    expect(text(r)).toContain('Long running operation completed');
    // The SDK dispatches notifications a microtask late but responses at once, so a progress
    // notification that arrives in the same chunk as the result (here the last one) can be dropped.
    expect(progress.length).toBeGreaterThanOrEqual(3);
    expect(progress).toEqual([1, 2, 3, 4].slice(0, progress.length).map((i) => `everything__trigger-long-running-operation: ${i}/4`));
  });

  it('ends an aborted long-running call promptly with a "cancelled" error result', async () => {
    const ac = new AbortController();
    const progress: string[] = [];
    const started = Date.now();
    const call = t.tools.get('everything__trigger-long-running-operation')!.call({ duration: 20, steps: 40 }, ctx({ signal: ac.signal, progress: (p) => (progress.push(p), ac.abort()) }));
    const r = await call;
    expect(Date.now() - started).toBeLessThan(3000);
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(r.error).toBe(true);
    expect(text(r)).toMatch(/cancelled/);
    // The connection is still usable afterwards.
    expect(text(await t.tools.get('everything__echo')!.call({ message: 'still here' }, ctx()))).toBe('Echo: still here');
  });

  it('lists resources and resource templates as resource contexts', () => {
    const res = t.host.resources();
    expect(res).toContainEqual({
      type: 'resource',
      uri: 'demo://resource/static/document/instructions.md',
      name: 'instructions.md',
      description: 'Static document file exposed from /docs: instructions.md',
      mimeType: 'text/markdown',
      server: 'everything',
    });
    expect(res).toContainEqual(expect.objectContaining({ uri: 'demo://resource/dynamic/blob/{resourceId}', name: 'Dynamic Blob Resource', server: 'everything' }));
  });

  it('reads a text resource and describes a blob resource', async () => {
    const signal = new AbortController().signal;
    const doc = await t.host.readResource({ server: 'everything', uri: 'demo://resource/static/document/instructions.md' }, signal);
    expect(doc).toContain('# Everything Server');
    const blob = await t.host.readResource({ server: 'everything', uri: 'demo://resource/dynamic/blob/7' }, signal);
    const bytes = Buffer.byteLength(`Resource 7: This is a base64 blob created at ${new Date().toLocaleTimeString()}`);
    expect(blob).toMatch(/^\[blob text\/plain, \d+ bytes\]$/);
    expect(Math.abs(Number(/(\d+) bytes/.exec(blob)![1]) - bytes)).toBeLessThanOrEqual(3);
  });

  it('subscribes on read and reports notifications/resources/updated through updatedSince until re-read', async () => {
    const ref = { server: 'everything', uri: 'demo://resource/dynamic/text/3' };
    const signal = new AbortController().signal;
    expect(await t.host.readResource(ref, signal)).toMatch(/^Resource 3: This is a plaintext resource/);
    expect(t.host.updatedSince([ref])).toEqual([]);
    const toggle = t.tools.get('everything__toggle-subscriber-updates')!;
    expect(text(await toggle.call({}, ctx()))).toContain('Started simulated resource updated notifications');
    try {
      const updated = await waitFor(() => t.host.updatedSince([ref]).length && t.host.updatedSince([ref]), 'the update');
      expect(updated).toEqual([{ type: 'resource', uri: ref.uri, name: ref.uri, description: '', mimeType: '', server: 'everything' }]);
      expect(log.read()).toContain('Received Subscribe Resource request for URI: demo://resource/dynamic/text/3');
      await t.host.readResource(ref, signal);
      expect(t.host.updatedSince([ref])).toEqual([]);
    } finally {
      await toggle.call({}, ctx());
    }
  });

  it('offers simple-prompt and args-prompt as mcp-prompt Commands that render the messages', async () => {
    const simple = t.commands.find('everything:simple-prompt')!;
    expect(simple).toMatchObject({ type: 'mcp-prompt', description: 'A prompt with no arguments', arguments: [] });
    expect(await simple.run([], cmdCtx())).toEqual({
      kind: 'prompt',
      userText: '/everything:simple-prompt',
      contextText: 'user: This is a simple prompt without arguments.',
    });
    const args = t.commands.find('everything:args-prompt')!;
    expect(args.arguments).toEqual([
      { name: 'city', description: 'Name of the city', required: true },
      // server-everything loses the description of the optional argument (zod .describe().optional()).
      { name: 'state', required: false },
    ]);
    expect(await args.run(['Paris', 'Texas'], cmdCtx())).toEqual({
      kind: 'prompt',
      userText: '/everything:args-prompt Paris Texas',
      contextText: "user: What's weather in Paris, Texas?",
    });
    expect(await args.run([], cmdCtx())).toEqual({ kind: 'show', text: 'Missing argument(s): city. Usage: /everything:args-prompt <city> [state]' });
    expect(t.commands.query('everything').map((c) => c.name)).toEqual(expect.arrayContaining(['everything:simple-prompt', 'everything:resource-prompt']));
  });

  it('renders an embedded resource in a prompt', async () => {
    const r = await t.commands.find('everything:resource-prompt')!.run(['Text', '2'], cmdCtx());
    expect(r.kind).toBe('prompt');
    const context = (r as { contextText: string }).contextText;
    expect(context).toContain('user: This prompt includes the Text resource with id: 2.');
    expect(context).toMatch(/user: Resource 2: This is a plaintext resource created at/);
  });

  it('returns the server instructions for the system prompt', () => {
    const [instr] = t.host.instructions();
    expect(instr.startsWith('Instructions from MCP server everything:\n# Everything Server – Server Instructions')).toBe(true);
  });

  it('logs the server stderr and its notifications/message under mcp:everything', async () => {
    // After roots/list the server logs "Roots updated" at info; we asked for debug (logging/setLevel).
    await waitFor(() => log.read().includes('Roots updated'), 'the roots log message');
    const lines = log.read().split('\n');
    expect(lines.find((l) => l.includes('Roots updated'))).toMatch(/INFO \[mcp:everything\] everything-server: Roots updated: 1 root\(s\) received from client/);
    expect(lines.some((l) => /INFO \[mcp:everything\] stderr: Starting default \(STDIO\) server/.test(l))).toBe(true);
  });

  it('stops (tools and prompts removed, child gone) and starts again by name', async () => {
    const pid = t.host.pid('everything')!;
    expect(isAlive(pid)).toBe(true);
    await t.host.stop('everything');
    expect(t.host.servers()[0].status).toBe('stopped');
    expect(t.events.at(-1)).toMatchObject({ status: 'stopped', tools: [] });
    expect(t.tools.all()).toEqual([]);
    expect(t.commands.all()).toEqual([]);
    expect(t.host.resources()).toEqual([]);
    expect(t.host.instructions()).toEqual([]);
    expect(isAlive(pid)).toBe(false);
    const stale = await t.host.readResource({ server: 'everything', uri: 'demo://x' }, new AbortController().signal).catch((e: Error) => e.message);
    expect(stale).toBe('MCP server "everything" is stopped');

    await t.host.start('everything');
    expect(t.host.servers()[0].status).toBe('running');
    expect(t.host.pid('everything')).not.toBe(pid);
    expect(text(await t.tools.get('everything__echo')!.call({ message: 'again' }, ctx()))).toBe('Echo: again');
  });

  it('dispose leaves no child process', async () => {
    const pid = t.host.pid('everything')!;
    expect(isAlive(pid)).toBe(true);
    const before = t.events.length;
    await t.host.dispose();
    expect(isAlive(pid)).toBe(false);
    expect(t.tools.all()).toEqual([]);
    expect(t.events.length).toBe(before);
  });
});
