import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { ECA, EcaProc, tempDir, useEcaProcs, workspace } from './harness.js';

const track = useEcaProcs();
function start(): EcaProc {
  return track(new EcaProc({ home: tempDir(), config: { chat: { generateTitles: false } } }));
}

describe('base protocol over real stdio', () => {
  it('answers requests before initialize with -32002', async () => {
    const p = start();
    const res = await p.request(ECA.chatList, {});
    expect(res.error?.code).toBe(-32002);
    expect(res.error?.message).toMatch(/initialize/);
  });

  it('answers malformed JSON with -32700 and keeps serving', async () => {
    const p = start();
    const body = '{"jsonrpc":"2.0","id":7,"method":"initialize",';
    p.writeRaw(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    const err = await p.waitFor((m) => m.error?.code === -32700, 'parse error');
    expect(err.id).toBe(7);
    const init = await p.initialize(workspace());
    expect(init.result).toBeDefined();
  });

  it('answers a non-JSON-RPC message with -32600', async () => {
    const p = start();
    p.writeRaw(`Content-Length: 21\r\n\r\n{"id":3,"method":"x"}`);
    const err = await p.waitFor((m) => m.error?.code === -32600, 'invalid request');
    expect(err.id).toBe(3);
    expect(err.error?.message).toMatch(/jsonrpc/);
  });

  it('rejects a Content-Type charset other than utf-8', async () => {
    const p = start();
    const body = '{"jsonrpc":"2.0","id":11,"method":"initialize","params":{}}';
    p.writeRaw(`Content-Length: ${body.length}\r\nContent-Type: application/vscode-jsonrpc; charset=latin1\r\n\r\n${body}`);
    const err = await p.waitFor((m) => m.id === 11, 'charset error');
    expect(err.error?.code).toBe(-32700);
    expect(err.error?.message).toMatch(/charset/i);
    // utf-8 spelled explicitly is fine.
    const ok = '{"jsonrpc":"2.0","id":12,"method":"chat/list","params":{}}';
    p.writeRaw(`Content-Length: ${ok.length}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n${ok}`);
    expect((await p.waitFor((m) => m.id === 12)).error?.code).toBe(-32002);
  });

  it('answers unknown methods with -32601 and ignores unknown notifications', async () => {
    const p = start();
    await p.initialize(workspace());
    p.notify('foo/bar', { x: 1 });
    const res = await p.request('foo/baz', {});
    expect(res.error?.code).toBe(-32601);
    expect(p.messages.filter((m) => m.error && m.id === null)).toHaveLength(0);
  });

  it('answers invalid params with -32602 naming the field', async () => {
    const p = start();
    await p.initialize(workspace());
    const res = await p.request(ECA.chatPrompt, { message: 42 });
    expect(res.error?.code).toBe(-32602);
    expect(res.error?.message).toMatch(/message/);
    const res2 = await p.request(ECA.chatOpen, {});
    expect(res2.error?.message).toMatch(/chatId/);
  });

  it('sends config/updated and tool/serverUpdated after initialized', async () => {
    const p = start();
    const init = await p.initialize(workspace());
    expect(init.result.chatWelcomeMessage).toMatch(/patchbay/);
    const cfg = await p.waitFor((m) => m.method === ECA.configUpdated.method);
    expect(cfg.params.chat.agents).toEqual(['code', 'plan']);
    expect(cfg.params.chat.behaviors).toEqual(['agent', 'plan']);
    expect(cfg.params.chat.selectAgent).toBe('code');
    const tools = await p.waitFor((m) => m.method === ECA.toolServerUpdated.method);
    // As ECA's own entry (src/eca/features/tools.clj `init-servers!`): type native, named "ECA", bare tool names.
    expect(tools.params).toMatchObject({ type: 'native', name: 'ECA' });
    const names = tools.params.tools.map((t: { name: string }) => t.name);
    for (const n of ['read_file', 'directory_tree', 'grep', 'write_file', 'edit_file', 'move_file', 'shell_command', 'editor_diagnostics']) {
      expect(names).toContain(n);
    }
  });

  it('honours $/cancelRequest for an in-flight request without breaking the connection', async () => {
    const p = start();
    await p.initialize(workspace());
    p.send({ id: 99, method: ECA.chatQueryContext.method, params: { query: 'a', contexts: [] } });
    p.notify('$/cancelRequest', { id: 99 });
    const res = await p.waitFor((m) => m.id === 99);
    // Either it finished first or it was cancelled (-32800); both settle the request.
    expect(res.result !== undefined || res.error?.code === -32800).toBe(true);
    expect((await p.request(ECA.chatList, {})).result.chats).toEqual([]);
  });

  it('exits 0 after shutdown + exit, and 1 on exit without shutdown', async () => {
    const a = start();
    await a.initialize(workspace());
    expect((await a.request(ECA.shutdown)).result).toBeNull();
    a.notify(ECA.exit);
    expect(await a.exited).toBe(0);

    const b = start();
    await b.initialize(workspace());
    b.notify(ECA.exit);
    expect(await b.exited).toBe(1);
  });

  it("exits when the editor's processId dies", async () => {
    const parent = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    const p = start();
    await p.initialize(workspace(), { processId: parent.pid });
    parent.kill('SIGKILL');
    const code = await Promise.race([p.exited, new Promise((r) => setTimeout(() => r('still running'), 5000))]);
    expect(code).toBe(1);
  });

  it('keeps stdout for protocol only: logs go to stderr', async () => {
    const p = start();
    await p.initialize(workspace());
    await p.waitFor((m) => m.method === ECA.configUpdated.method);
    expect(p.stderr).toMatch(/initialized by test/);
    // Every byte on stdout parsed as a framed message (the harness throws otherwise).
    expect(p.messages.length).toBeGreaterThan(1);
  });
});
