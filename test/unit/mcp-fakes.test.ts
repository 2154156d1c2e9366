/**
 * The MCP host against misbehaving fake servers (test/fixtures/mcp-*.mjs): one that crashes,
 * one that hangs, one that writes garbage to stdout.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { useHosts, captureLog, ctx, fixture, isAlive, makeHost, tempDir, text, waitFor, type TestHost } from '../support/mcp-helpers.js';

const log = captureLog();
const host = useHosts();

function recordFile(): { path: string; lines(): string[] } {
  const path = join(tempDir(), 'record.txt');
  return { path, lines: () => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : []) };
}

const node = (file: string, env: Record<string, string> = {}) => ({ command: process.execPath, args: [fixture(file)], env });

describe('a server that crashes mid-call', () => {
  it('yields an error result within a second, is marked failed, and is restarted after 1 s', async () => {
    const rec = recordFile();
    const t = host({ crash: node('mcp-crash.mjs', { MCP_RECORD: rec.path }) });
    await t.host.start('crash');
    const pid = t.host.pid('crash')!;
    const crash = t.tools.get('crash__crash')!;
    const ok = t.tools.get('crash__ok')!;
    expect(ok).toMatchObject({ mutates: false, readOnly: false });

    const started = Date.now();
    const r = await crash.call({}, ctx());
    expect(Date.now() - started).toBeLessThan(1000);
    expect(r.error).toBe(true);
    expect(text(r)).toBe('crash__crash: the MCP server "crash" closed the connection during the call (it may have crashed)');

    await waitFor(() => t.host.servers()[0].status === 'failed', 'failed');
    expect(t.tools.all()).toEqual([]);
    // While it is down, calls through the old Tool object answer at once.
    expect(text(await ok.call({}, ctx()))).toMatch(/^crash__ok: the MCP server "crash" is (failed|starting)/);
    const failed = t.events.find((e) => e.status === 'failed')!;
    expect(failed.lastError).toMatch(/connection closed; stderr: .*crash fake: crashing mid-call$/);

    await waitFor(() => t.host.servers()[0].status === 'running', 'the restart', 5000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(t.statuses('crash')).toEqual(['starting', 'running', 'failed', 'starting', 'running']);
    expect(t.host.servers()[0]).toMatchObject({ restarts: 1, lastError: failed.lastError });
    expect(rec.lines().filter((l) => l.startsWith('start'))).toHaveLength(2);
    expect(isAlive(pid)).toBe(false);
    expect(t.host.pid('crash')).not.toBe(pid);
    // The Tool objects from before the crash reach the new process.
    expect(text(await ok.call({}, ctx()))).toBe('ok');
    expect(log.read()).toContain('[mcp:crash] stderr: crash fake: crashing mid-call');
  });

  it('gives up after maxRestarts and stays failed until a manual start', async () => {
    const rec = recordFile();
    const t = host({ crash: node('mcp-crash.mjs', { MCP_RECORD: rec.path, CRASH_ON_START: '1' }) }, { restart: { baseDelayMs: 20, maxRestarts: 3 } });
    t.host.startAll();
    await waitFor(() => t.host.servers()[0].restarts === 3 && t.host.servers()[0].status === 'failed', 'three restarts');
    await new Promise((r) => setTimeout(r, 400));
    expect(rec.lines()).toHaveLength(4);
    expect(t.statuses('crash')).toEqual(['starting', 'failed', 'starting', 'failed', 'starting', 'failed', 'starting', 'failed']);
    expect(t.host.servers()[0].lastError).toMatch(/^failed to start: .*Connection closed/);
    expect(log.read()).toContain('giving up after 3 restarts');

    await t.host.start('crash');
    expect(t.host.servers()[0]).toMatchObject({ status: 'failed', restarts: 0 });
    expect(rec.lines()).toHaveLength(5);
  });
});

describe('a server that hangs', () => {
  it('times out with an error result and receives notifications/cancelled', async () => {
    const rec = recordFile();
    const t = host({ hang: node('mcp-hang.mjs', { MCP_RECORD: rec.path }) }, { timeoutSeconds: 1 });
    await t.host.start('hang');
    const started = Date.now();
    const r = await t.tools.get('hang__hang')!.call({}, ctx());
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(1000);
    expect(took).toBeLessThan(2000);
    expect(r).toEqual({ error: true, outputs: [{ type: 'text', text: 'hang__hang: timed out after 1 s (the server was sent notifications/cancelled and will be restarted)' }] });
    const cancelled = await waitFor(() => rec.lines().find((l) => l.startsWith('cancelled')), 'the cancellation to reach the server');
    const callId = rec
      .lines()
      .find((l) => l.startsWith('call'))!
      .split(' ')[1];
    expect(cancelled).toBe(`cancelled ${callId} timed out after 1 s`);
    // A server that let a call time out is restarted.
    await waitFor(() => t.statuses('hang').join(',') === 'starting,running,failed,starting,running', 'failed, then restarted');
    expect(t.host.servers()[0].lastError).toMatch(/did not answer tools\/call hang within 1 s/);
  });

  it('ends an aborted call at once with "cancelled", and tells the server', async () => {
    const rec = recordFile();
    const t = host({ hang: node('mcp-hang.mjs', { MCP_RECORD: rec.path }) }, { timeoutSeconds: 30 });
    await t.host.start('hang');
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('promptStop')), 200);
    const started = Date.now();
    const r = await t.tools.get('hang__hang')!.call({}, ctx({ signal: ac.signal }));
    expect(Date.now() - started).toBeLessThan(1000);
    expect(r).toEqual({ error: true, outputs: [{ type: 'text', text: 'hang__hang: cancelled' }] });
    await waitFor(() => rec.lines().some((l) => /^cancelled patchbay-\d+ Error: promptStop$/.test(l)), 'the cancellation');
    // Already aborted: no request at all.
    const calls = rec.lines().filter((l) => l.startsWith('call')).length;
    expect(text(await t.tools.get('hang__hang')!.call({}, ctx({ signal: ac.signal })))).toBe('hang__hang: cancelled');
    expect(rec.lines().filter((l) => l.startsWith('call')).length).toBe(calls);
  });

  it('is SIGKILLed on dispose when it ignores stdin EOF and SIGTERM', async () => {
    const rec = recordFile();
    const t = host({ hang: node('mcp-hang.mjs', { MCP_RECORD: rec.path, IGNORE_SIGTERM: '1' }) });
    await t.host.start('hang');
    const pid = t.host.pid('hang')!;
    await t.host.dispose();
    expect(isAlive(pid)).toBe(false);
    expect(rec.lines()).toContain('got SIGTERM, ignoring');
  });

  it('dispose during the start leaves no child behind', async () => {
    const rec = recordFile();
    const t = host({ hang: node('mcp-hang.mjs', { MCP_RECORD: rec.path }), crash: node('mcp-crash.mjs', { MCP_RECORD: rec.path }) });
    t.host.startAll();
    await waitFor(() => t.host.servers().every((s) => s.status === 'starting'), 'both starting');
    await waitFor(() => rec.lines().length >= 1, 'a child to spawn');
    await t.host.dispose();
    await new Promise((r) => setTimeout(r, 200));
    const pids = rec
      .lines()
      .map((l) => Number(/^start (\d+)$/.exec(l)?.[1]))
      .filter(Boolean);
    expect(pids.length).toBeGreaterThanOrEqual(1);
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
    expect(t.tools.all()).toEqual([]);
  });
});

describe('a server that writes garbage to stdout', () => {
  it('the call in flight ends with an error result at once; the server is marked failed and restarted', async () => {
    const t = host({ garbage: node('mcp-garbage.mjs') });
    await t.host.start('garbage');
    const started = Date.now();
    const r = await t.tools.get('garbage__after-garbage')!.call({}, ctx());
    expect(Date.now() - started).toBeLessThan(1000);
    expect(r.error).toBe(true);
    expect(text(r)).toMatch(/wrote something other than MCP messages to stdout/);
    await waitFor(() => t.statuses('garbage').join(',') === 'starting,running,failed,starting,running', 'failed, then restarted');
    expect(t.host.servers()[0].lastError).toMatch(/wrote something other than MCP messages to stdout/);
    const warnings = log
      .read()
      .split('\n')
      .filter((l) => l.includes('WARN [mcp:garbage] protocol error'));
    expect(warnings.some((l) => /is not valid JSON|Unexpected|JSON/.test(l))).toBe(true);
  });

  it('a server that writes garbage as soon as it starts is retried a bounded number of times, then stays failed', async () => {
    const t = host({ garbage: node('mcp-garbage.mjs', { MCP_GARBAGE_AT_START: '1' }) });
    await t.host.start('garbage');
    await waitFor(() => t.host.servers()[0].status === 'failed' && t.host.servers()[0].restarts >= 2, 'bounded restarts', 20_000);
    const r = await t.tools
      .all()
      .find((x) => x.name === 'after-garbage')
      ?.call({}, ctx());
    expect(r === undefined || r.error).toBe(true);
  });
});

describe('tools/call on the wire (a hand-written server)', () => {
  const wire = (rec: { path: string }) => node('mcp-wire.mjs', { MCP_RECORD: rec.path });
  const calls = (rec: { lines(): string[] }) =>
    rec
      .lines()
      .map((l) => JSON.parse(l))
      .filter((m) => m.method === 'tools/call');

  it('sends the request with its own string id and progress token, and reads text results', async () => {
    const rec = recordFile();
    const t = host({ wire: wire(rec) });
    await t.host.start('wire');
    expect(text(await t.tools.get('wire__ok')!.call({ city: 'Paris' }, ctx()))).toBe('ok {"city":"Paris"}');
    const [req] = calls(rec);
    expect(req).toEqual({ jsonrpc: '2.0', id: expect.stringMatching(/^patchbay-\d+$/), method: 'tools/call', params: { name: 'ok', arguments: { city: 'Paris' }, _meta: { progressToken: req.id } } });
  });

  it('turns a JSON-RPC error and a result that is not a CallToolResult into error results', async () => {
    const t = host({ wire: wire(recordFile()) });
    await t.host.start('wire');
    expect(await t.tools.get('wire__fails')!.call({}, ctx())).toEqual({ error: true, outputs: [{ type: 'text', text: 'wire__fails failed: MCP error -32602: no such city' }] });
    const bad = await t.tools.get('wire__malformed')!.call({}, ctx());
    expect(bad.error).toBe(true);
    expect(text(bad)).toMatch(/^wire__malformed failed: .*content/s);
    // The server is still running and answers the next call.
    expect(t.host.servers()[0].status).toBe('running');
    expect(text(await t.tools.get('wire__ok')!.call({}, ctx()))).toBe('ok {}');
  });

  it('shows progress of its own call and logs a malformed progress notification', async () => {
    const t = host({ wire: wire(recordFile()) });
    await t.host.start('wire');
    const seen: string[] = [];
    const r = await t.tools.get('wire__progress')!.call({}, ctx({ progress: (s: string) => seen.push(s) }));
    expect(text(r)).toBe('done');
    expect(seen).toEqual(['wire__progress: 1/2 half']);
    await waitFor(() => log.read().includes('ignored a malformed progress notification'), 'the warning');
  });

  it('takes the first of two answers, ignores the second and one for a call never made; drops progress after the result', async () => {
    const t = host({ wire: wire(recordFile()) });
    await t.host.start('wire');
    const before = log.read().length;
    expect(text(await t.tools.get('wire__twice')!.call({}, ctx()))).toBe('first');
    await waitFor(() => /WARN .*ignored an answer to tools\/call patchbay-\d+0000, which patchbay never sent/.test(log.read().slice(before)), 'the warning');
    expect(log.read().slice(before)).toMatch(/DEBUG .*ignored a late or repeated answer to tools\/call patchbay-\d+\n/);
    const seen: string[] = [];
    expect(text(await t.tools.get('wire__progress-after')!.call({}, ctx({ progress: (s: string) => seen.push(s) })))).toBe('done');
    await waitFor(() => log.read().slice(before).includes('unknown token'), 'the late progress to reach the SDK');
    expect(seen).toEqual([]);
    expect(log.read().slice(before)).not.toMatch(/protocol error/);
    expect(t.statuses('wire')).toEqual(['starting', 'running']);
  });

  it('a timeout sends notifications/cancelled for its id and restarts the server', async () => {
    const rec = recordFile();
    const t = host({ wire: wire(rec) }, { timeoutSeconds: 1 });
    await t.host.start('wire');
    const r = await t.tools.get('wire__late')!.call({}, ctx());
    expect(text(r)).toBe('wire__late: timed out after 1 s (the server was sent notifications/cancelled and will be restarted)');
    const [req] = calls(rec);
    const cancelled = () =>
      rec
        .lines()
        .map((l) => JSON.parse(l))
        .find((m) => m.method === 'notifications/cancelled');
    await waitFor(cancelled, 'the cancellation');
    expect(cancelled().params).toEqual({ requestId: req.id, reason: 'timed out after 1 s' });
    await waitFor(() => t.statuses('wire').join(',') === 'starting,running,failed,starting,running', 'restarted');
    expect(text(await t.tools.get('wire__ok')!.call({}, ctx()))).toBe('ok {}');
  });

  it('drops the answer to a call that was cancelled, quietly, and keeps the server', async () => {
    const rec = recordFile();
    const t = host({ wire: wire(rec) });
    await t.host.start('wire');
    const before = log.read().length;
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('promptStop')), 100);
    expect(text(await t.tools.get('wire__late')!.call({}, ctx({ signal: ac.signal })))).toBe('wire__late: cancelled');
    // The server answers 1.5 s after the request all the same.
    await new Promise((r) => setTimeout(r, 1700));
    expect(log.read().slice(before)).not.toMatch(/unknown message ID|protocol error/);
    expect(t.statuses('wire')).toEqual(['starting', 'running']);
    expect(text(await t.tools.get('wire__ok')!.call({}, ctx()))).toBe('ok {}');
  });

  it('calls a tool with an output schema through the SDK, which checks its structured content', async () => {
    const rec = recordFile();
    const t = host({ wire: wire(rec) });
    await t.host.start('wire');
    const r = await t.tools.get('wire__typed')!.call({}, ctx());
    expect(r.error).toBe(true);
    expect(text(r)).toMatch(/^wire__typed failed: .*Structured content does not match the tool's output schema/);
    expect(calls(rec)[0].id).toEqual(expect.any(Number));
  });
});
