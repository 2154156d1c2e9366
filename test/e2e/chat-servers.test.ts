// A chat's own MCP servers (ACP `session/new` / `session/load` `mcpServers`, schema.json McpServer;
// runtime/chat-servers.ts): started beside the configured ones, offered to that chat only, waited
// for by its first prompt, stopped on remove, replace and dispose, never written to a config file.
// ECA has no such request (its MCP servers come from config only: eca src/eca/features/tools/mcp.clj),
// so this drives a Workspace as the ACP façade will, with real MCP servers as child processes
// (@modelcontextprotocol/server-everything, and the notes fixture) and the fake LLM over real HTTP.
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { configEntries } from '../../src/runtime/chat-servers.js';
import type { ChatMcpServer } from '../../src/shapes/chat-servers.js';
import { isAlive } from '../../src/util/pid.js';
import { isZombie } from '../../src/util/process-tree.js';
import { everythingBin, fixture, waitFor } from '../support/mcp-helpers.js';
import { filesUnder, turnsWorkspace, type TurnsWorkspace } from '../support/workspace-turns.js';

let t: TurnsWorkspace | undefined;
const children: ChildProcess[] = [];
afterEach(async () => {
  await t?.close();
  t = undefined;
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

/** server-everything as a remote server on a free port (it reads PORT and says on stderr when it listens). */
async function everythingOver(transport: 'streamableHttp' | 'sse'): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as AddressInfo).port;
  await new Promise((r) => probe.close(r));
  const child = spawn(process.execPath, [everythingBin, transport], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  await waitFor(() => err.includes(`port ${port}`), `server-everything ${transport} to listen`);
  return port;
}

const everything = (name = 'everything'): ChatMcpServer => ({ name, transport: 'stdio', command: process.execPath, args: [everythingBin, 'stdio'], env: {} });
const notes = (name = 'notes', extra: string[] = []): ChatMcpServer => ({ name, transport: 'stdio', command: process.execPath, args: [fixture('mcp-notes.mjs'), ...extra], env: {} });
const running = (pid: number | undefined) => pid !== undefined && isAlive(pid) && !isZombie(pid);
const gone = async (pid: number) => waitFor(() => !running(pid), `pid ${pid} to exit`);
/** The tool names the model was offered in a recorded request (OpenAI chat format). */
const offered = (body: { tools?: Array<{ function: { name: string } }> }) => (body.tools ?? []).map((x) => x.function.name);

describe("a chat's own MCP servers", () => {
  it('chat A gets the tools and its first prompt waits for them; A calls one; chat B never sees them; remove stops the process', { timeout: 60_000 }, async () => {
    t = await turnsWorkspace();
    const { ws, llm } = t;
    const configBefore = [...filesUnder(join(t.home, '.config')), ...filesUnder(t.root)];
    // No wait before the prompt: the turn itself waits for the server's first start (toolsReady).
    await ws.addChatServers('chat-a', [everything()]);
    t.onEvent((chatId, e) => e.type === 'toolCall' && e.state === 'announced' && e.needsApproval && ws.chats.approve(chatId, e.id));
    llm.script([{ toolCall: { id: 'e1', name: 'everything__echo', args: { message: 'from A' } } }], [{ text: 'echoed' }]);
    expect(await ws.chats.prompt({ chatId: 'chat-a', message: 'echo' }).done).toEqual({ stopReason: 'end_turn' });
    expect(offered(llm.requests[0].body)).toContain('everything__echo');
    // Like any MCP tool it asked first (not read-only), then ran.
    expect(t.calls('chat-a')).toEqual(['announced!:echo', 'running:echo', 'done:echo']);
    const done = t.events.find(({ e }) => e.type === 'toolCall' && e.state === 'done')!.e;
    expect(done).toMatchObject({ server: 'everything', error: false, outputs: [{ type: 'text', text: 'Echo: from A' }] });
    expect(t.statuses.filter((s) => s.name === 'everything').map((s) => s.status)).toContain('running');

    llm.script([{ text: 'hello B' }]);
    expect(await ws.chats.prompt({ chatId: 'chat-b', message: 'hi' }).done).toEqual({ stopReason: 'end_turn' });
    expect(offered(llm.requests.at(-1)!.body).filter((n) => n.startsWith('everything__'))).toEqual([]);
    expect(ws.tools.all('chat-b').some((x) => x.server === 'everything')).toBe(false);
    // A tool of chat A named by chat B's model is unknown there, not run.
    expect(ws.tools.get('everything__echo', 'chat-b')).toBeUndefined();

    const pid = ws.chatServers.pid('chat-a', 'everything')!;
    expect(running(pid)).toBe(true);
    await ws.removeChatServers('chat-a');
    await gone(pid);
    expect(ws.tools.all('chat-a').some((x) => x.server === 'everything')).toBe(false);
    expect(t.statuses.at(-1)).toMatchObject({ name: 'everything', status: 'stopped' });
    expect(t.removed).toEqual(['everything']);
    // Nothing was written where config lives (user config, the folder's .patchbay).
    expect([...filesUnder(join(t.home, '.config')), ...filesUnder(t.root)]).toEqual(configBefore);
  });

  it('a server that cannot start is reported failed, never thrown; the others of the set start and the prompt goes on', { timeout: 60_000 }, async () => {
    t = await turnsWorkspace({ mcpStartWaitSeconds: 20 });
    const { ws, llm } = t;
    await expect(
      ws.addChatServers('c1', [
        { name: 'missing', transport: 'stdio', command: join(t.root, 'no-such-server'), args: [], env: {} },
        { name: 'badurl', transport: 'http', url: 'not a url', headers: {} },
        notes(),
      ]),
    ).resolves.toBeUndefined();
    llm.script([{ text: 'fine' }]);
    expect(await ws.chats.prompt({ chatId: 'c1', message: 'go' }).done).toEqual({ stopReason: 'end_turn' });
    const last = (name: string) => t!.statuses.filter((s) => s.name === name).at(-1);
    expect(last('missing')).toMatchObject({ status: 'failed', error: expect.stringMatching(/no-such-server|ENOENT/) });
    expect(last('badurl')).toMatchObject({ status: 'failed', error: expect.stringContaining('url') });
    expect(last('notes')).toMatchObject({ status: 'running' });
    expect(offered(llm.requests[0].body)).toContain('notes__note_count');
    // The chat is told which server failed, as for configured servers.
    const notice = t.events.find(({ chatId, e }) => chatId === 'c1' && e.type === 'notice')?.e;
    expect(notice).toMatchObject({ text: expect.stringContaining('MCP server missing failed to start') });
  });

  it('adding again replaces the set: a server not named again stops, an unchanged one keeps its process', { timeout: 60_000 }, async () => {
    t = await turnsWorkspace();
    const { ws } = t;
    await ws.addChatServers('c1', [notes('keep'), notes('drop')]);
    const keep = await waitFor(() => ws.chatServers.pid('c1', 'keep'), 'keep to run');
    const drop = await waitFor(() => ws.chatServers.pid('c1', 'drop'), 'drop to run');
    await ws.addChatServers('c1', [notes('keep'), notes('added')]);
    await gone(drop);
    const added = await waitFor(() => ws.chatServers.pid('c1', 'added'), 'added to run');
    expect(ws.chatServers.pid('c1', 'keep')).toBe(keep);
    expect(running(keep) && running(added)).toBe(true);
    expect(
      ws.tools
        .all('c1')
        .map((x) => `${x.server}__${x.name}`)
        .filter((n) => n.endsWith('note_count'))
        .sort(),
    ).toEqual(['added__note_count', 'keep__note_count']);
    expect(t.removed).toEqual(['drop']);
  });

  it('a name a configured server has gets "-session" (for that chat, both run apart); reserved and odd names are made usable', { timeout: 60_000 }, async () => {
    t = await turnsWorkspace({ mcpServers: { notes: { command: process.execPath, args: [fixture('mcp-notes.mjs')] } } });
    const { ws } = t;
    // The configured `notes` runs too (what a front end starts at its session start).
    await ws.startServers();
    await ws.addChatServers('c1', [notes()]);
    await waitFor(() => ws.chatServers.pid('c1', 'notes-session'), 'notes-session to run');
    const names = ws.tools.all('c1').map((x) => `${x.server}__${x.name}`);
    expect(names).toEqual(expect.arrayContaining(['notes__note_count', 'notes-session__note_count']));
    expect(ws.tools.all('other').map((x) => x.server)).not.toContain('notes-session');
    expect(Object.keys(configEntries([notes('my server'), notes('patchbay'), notes('a__b'), notes('x'), notes('x')], ['notes']))).toEqual(['my-server', 'mcp-patchbay', 'a_b', 'x', 'x-session']);
  });

  it('dispose stops every chat’s servers', { timeout: 60_000 }, async () => {
    t = await turnsWorkspace();
    const { ws } = t;
    await ws.addChatServers('c1', [notes()]);
    await ws.addChatServers('c2', [notes()]);
    const pids = [await waitFor(() => ws.chatServers.pid('c1', 'notes'), 'c1 notes'), await waitFor(() => ws.chatServers.pid('c2', 'notes'), 'c2 notes')];
    expect(pids[0]).not.toBe(pids[1]);
    await ws.dispose();
    for (const pid of pids) await gone(pid);
  });

  it('a folder added later reaches the chat’s running servers (roots/list); deleting the chat stops them', { timeout: 60_000 }, async () => {
    t = await turnsWorkspace();
    const { ws } = t;
    await ws.addChatServers('c1', [everything()]);
    // server-everything registers get-roots-list once it knows the client has roots.
    const tool = await waitFor(() => ws.tools.get('everything__get-roots-list', 'c1'), 'get-roots-list');
    const ctx = { signal: new AbortController().signal, roots: ws.roots, chatId: 'c1', editor: {} };
    const rootsText = async () => (await tool.call({}, ctx)).outputs.map((o) => (o.type === 'text' ? o.text : '')).join('\n');
    expect(await rootsText()).toContain(pathToFileURL(t.root).href);
    const extra = mkdtempSync(join(t.home, 'extra-'));
    await ws.changeRoots({ added: [extra], removed: [] });
    await waitFor(async () => (await rootsText()).includes(pathToFileURL(extra).href), 'the added folder in roots/list');

    const pid = ws.chatServers.pid('c1', 'everything')!;
    ws.chats.delete('c1');
    await gone(pid);
    expect(ws.tools.all('c1').some((x) => x.server === 'everything')).toBe(false);
  });

  it('remote servers over Streamable HTTP and over SSE serve the chat; their header values stay out of the log', { timeout: 60_000 }, async () => {
    t = await turnsWorkspace();
    const { ws } = t;
    const [http, sse] = [await everythingOver('streamableHttp'), await everythingOver('sse')];
    await ws.addChatServers('c1', [
      { name: 'web', transport: 'http', url: `http://127.0.0.1:${http}/mcp`, headers: { Authorization: 'Bearer sekret-4711' } },
      { name: 'old', transport: 'sse', url: `http://127.0.0.1:${sse}/sse`, headers: {} },
    ]);
    for (const name of ['web', 'old']) {
      const sum = await waitFor(() => ws.tools.get(`${name}__get-sum`, 'c1'), `${name}__get-sum`);
      const r = await sum.call({ a: 20, b: 22 }, { signal: new AbortController().signal, roots: ws.roots, chatId: 'c1', editor: {} });
      expect(r.outputs).toEqual([{ type: 'text', text: 'The sum of 20 and 22 is 42.' }]);
    }
    expect(readFileSync(join(t.home, '.patchbay', 'logs', 'server.log'), 'utf8')).toContain('MCP servers web, old');
    expect(readFileSync(join(t.home, '.patchbay', 'logs', 'server.log'), 'utf8')).not.toContain('sekret-4711');
    expect(t.statuses.filter((s) => s.status === 'running').map((s) => s.url)).toEqual(expect.arrayContaining([`http://127.0.0.1:${http}/mcp`, `http://127.0.0.1:${sse}/sse`]));
  });

  it('maps the transports to config entries (remote headers and stdio env kept)', () => {
    expect(
      configEntries(
        [
          { name: 'h', transport: 'http', url: 'https://example.test/mcp', headers: { Authorization: 'Bearer t' } },
          { name: 's', transport: 'sse', url: 'https://example.test/sse', headers: {} },
          { name: 'l', transport: 'stdio', command: 'srv', args: ['--x'], env: { K: 'v' } },
        ],
        [],
      ),
    ).toEqual({
      h: { type: 'http', url: 'https://example.test/mcp', headers: { Authorization: 'Bearer t' } },
      s: { type: 'sse', url: 'https://example.test/sse', headers: {} },
      l: { command: 'srv', args: ['--x'], env: { K: 'v' } },
    });
  });
});
