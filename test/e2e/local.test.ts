/**
 * The built-in local model end to end: `patchbay server` and `patchbay chat` with no API key
 * and no Ollama, running the tiny GGUF model (scripts/make-tiny-gguf.mjs) in-process through
 * node-llama-cpp; the download path against a local HTTP server; `patchbay models`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeTinyGguf } from '../../scripts/make-tiny-gguf.mjs';
import { cliConfig, EcaProc, runPatchbay, tempDir, useEcaProcs, workspace, type CliRun } from './harness.js';

const REPO = resolve(import.meta.dirname, '../..');
const tiny = writeTinyGguf(join(mkdtempSync(join(tmpdir(), 'pb-local-e2e-')), 'tiny.gguf'));
const track = useEcaProcs();

/** Serves the tiny model; `cut` makes the next answer stop after half the body. */
let server: Server;
let base = '';
let cutNext = false;
const requests: Array<{ url: string; range?: string }> = [];
beforeAll(async () => {
  const bytes = readFileSync(tiny.path);
  server = createServer((req, res) => {
    requests.push({ url: req.url ?? '', range: req.headers.range });
    const bad = req.url === '/bad.gguf';
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const from = m ? Number(m[1]) : 0;
    const headers = { 'x-linked-etag': `"${bad ? '0'.repeat(64) : tiny.sha256}"`, 'content-length': String(bytes.length - from) };
    res.writeHead(from ? 206 : 200, from ? { ...headers, 'content-range': `bytes ${from}-${bytes.length - 1}/${bytes.length}` } : headers);
    if (cutNext) {
      cutNext = false;
      res.write(bytes.subarray(from, from + Math.floor((bytes.length - from) / 2)));
      setTimeout(() => res.socket?.destroy(), 20);
      return;
    }
    res.end(bytes.subarray(from));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** `patchbay server` on the local model file `model`, with the default local model's settings (no contextSize: sized to the prompt). */
function localServer(model: string, settings?: Record<string, unknown>): EcaProc {
  // The model is named after its file (caller.gguf → local/caller).
  const name = model.slice(model.lastIndexOf('/') + 1).replace(/\.gguf$/, '');
  const providers = settings ? { providers: { local: { models: { [name]: settings } } } } : {};
  return track(new EcaProc({ home: tempDir(), config: { chat: { generateTitles: false }, ...providers }, env: { PATCHBAY_LOCAL_MODEL: model } }));
}

/** The usage content of a chat's last model step. */
const lastUsage = (p: EcaProc, chatId: string) => p.contents(chatId).findLast((c) => c.content.type === 'usage')?.content;

const texts = (p: EcaProc, chatId: string) => p.contents(chatId).filter((c) => c.role === 'assistant' && c.content.type === 'text');
const progressTexts = (p: EcaProc, chatId: string) => p.contents(chatId).flatMap((c) => (c.content.type === 'progress' && c.content.state === 'running' ? [c.content.text as string] : []));

/** Prompts, waits for `n` streamed tokens, stops the prompt and waits for the turn to end. */
async function promptAndStop(p: EcaProc, n: number, chatId?: string): Promise<{ chatId: string; stoppedAfterMs: number }> {
  const res = await p.request('chat/prompt', { message: 'write something', ...(chatId ? { chatId } : {}) });
  const id = res.result.chatId as string;
  let seen = 0;
  await p.waitFor((m) => m.method === 'chat/contentReceived' && m.params.chatId === id && m.params.content.type === 'text' && ++seen >= n, `${n} tokens`, 60_000);
  const t = Date.now();
  p.notify('chat/promptStop', { chatId: id });
  await p.turnDone(id, chatId ? 2 : 1, 10_000);
  return { chatId: id, stoppedAfterMs: Date.now() - t };
}

describe('patchbay server with no API key and no Ollama', () => {
  it('offers the local model, streams its tokens, stops on promptStop, and a second chat reuses the loaded model', async () => {
    const p = localServer(tiny.path);
    await p.initialize(workspace());
    const cfg = await p.waitFor((m) => m.method === 'config/updated', 'config/updated');
    // Named after the file PATCHBAY_LOCAL_MODEL points at, not after the default model it replaces.
    expect(cfg.params.chat.models).toEqual(['local/tiny']);
    expect(cfg.params.chat.selectModel).toBe('local/tiny');

    const first = await promptAndStop(p, 20);
    expect(progressTexts(p, first.chatId)).toContain('Loading local model tiny.gguf…');
    // While the prompt is read the chat says so: the last progress before the first token is not "Loading… 100%".
    const contents = p.contents(first.chatId);
    const firstToken = contents.findIndex((c) => c.role === 'assistant' && c.content.type === 'text');
    const before = contents.slice(0, firstToken).filter((c) => c.content.type === 'progress' && c.content.state === 'running');
    expect(before.at(-1)?.content.text).toBe('Thinking…');
    expect(p.text(first.chatId)).toMatch(/^[a-z ]{10,}$/);
    expect(first.stoppedAfterMs).toBeLessThan(5_000);
    const after = texts(p, first.chatId).length;
    await new Promise((r) => setTimeout(r, 300));
    expect(texts(p, first.chatId).length).toBe(after); // nothing streams after the stop
    expect(p.text(first.chatId, 'system')).toContain('Prompt stopped');

    const second = await promptAndStop(p, 5);
    expect(second.chatId).not.toBe(first.chatId);
    expect(progressTexts(p, second.chatId).some((t) => t.startsWith('Loading local model'))).toBe(false);
    expect(p.text(second.chatId)).toMatch(/^[a-z ]+$/);

    // The first chat goes on with its own context.
    await promptAndStop(p, 3, first.chatId);
  }, 90_000);

  it('a configured contextSize is the size the chat gets, and the usage gauge shows it, over the limit.context it would otherwise go by', async () => {
    const p = localServer(tiny.path, { contextSize: 12_288, limit: { context: 8192, output: 8 } });
    await p.initialize(workspace());
    const res = await p.request('chat/prompt', { message: 'hello' });
    const chatId = res.result.chatId as string;
    await p.turnDone(chatId, 1, 60_000);
    const usage = lastUsage(p, chatId);
    expect(usage).toMatchObject({ limit: { context: 12_288, output: 8 }, contextBreakdown: { contextLimit: 12_288 } });
    expect(usage?.sessionTokens).toBeGreaterThan(1000);
  }, 90_000);

  it('downloads the model on first use, with progress in the chat, and resumes a cut download', async () => {
    cutNext = true;
    const p = localServer(`${base}/tiny.gguf`);
    await p.initialize(workspace());
    const failed = await p.request('chat/prompt', { message: 'hi' });
    await p.turnDone(failed.result.chatId, 1, 30_000);
    expect(p.text(failed.result.chatId, 'system')).toMatch(/Could not get the local model/);

    requests.length = 0;
    const { chatId } = await promptAndStop(p, 3);
    expect(requests).toEqual([{ url: '/tiny.gguf', range: expect.stringMatching(/^bytes=\d+-$/) }]);
    expect(progressTexts(p, chatId).some((t) => /^Downloading .*tiny\.gguf: 100% /.test(t))).toBe(true);
    expect(p.text(chatId)).toMatch(/^[a-z ]+$/);
  }, 90_000);

  it('rejects a download whose checksum does not match, and keeps running', async () => {
    const p = localServer(`${base}/bad.gguf`);
    await p.initialize(workspace());
    const res = await p.request('chat/prompt', { message: 'hi' });
    await p.turnDone(res.result.chatId, 1, 30_000);
    expect(p.text(res.result.chatId, 'system')).toMatch(/checksum mismatch/);
    const list = await p.request('chat/list', {});
    expect(list.error).toBeUndefined();
  }, 60_000);
});

describe('a local model calling tools through the agent loop', () => {
  it('its call goes through approval and runs, and the loop hands the result back to the model for its next step', async () => {
    const caller = writeTinyGguf(join(tempDir(), 'caller.gguf'), { reply: '||call: patchbay__write_file({"path":"note.txt","content":"hi"})' });
    const ws = workspace();
    const p = localServer(caller.path);
    await p.initialize(ws);
    const res = await p.request('chat/prompt', { message: 'write a note' });
    const chatId = res.result.chatId as string;
    const isRun = (m: { method?: string; params?: any }) => m.method === 'chat/contentReceived' && m.params.chatId === chatId && m.params.content.type === 'toolCallRun';
    const run = await p.waitFor(isRun, 'toolCallRun', 30_000);
    expect(run.params.content).toMatchObject({ name: 'write_file', server: 'eca', arguments: { path: 'note.txt', content: 'hi' }, manualApproval: true });
    p.notify('chat/toolCallApprove', { chatId, toolCallId: run.params.content.id });
    const called = await p.waitFor((m) => m.method === 'chat/contentReceived' && m.params.chatId === chatId && m.params.content.type === 'toolCalled', 'toolCalled', 30_000);
    expect(called.params.content.error).toBe(false);
    expect(readFileSync(join(ws, 'note.txt'), 'utf8')).toBe('hi');
    // Scripted to call again after every result: the second call is stopped, not run.
    let runs = 0;
    const second = await p.waitFor((m) => isRun(m) && ++runs === 2, 'a second toolCallRun', 30_000);
    p.notify('chat/promptStop', { chatId });
    await p.turnDone(chatId, 1, 10_000);
    const rejected = p.contents(chatId).find((c) => c.content.type === 'toolCallRejected');
    expect(rejected?.content).toMatchObject({ id: second.params.content.id, reason: 'userPromptStop' });
  }, 90_000);
});

/** `patchbay ...args` in a fresh workspace: no config and no local model but what `env` names. */
function cli(args: string[], env: Record<string, string>, home: string): Promise<CliRun> {
  return runPatchbay(args, { home, cwd: workspace(), env: { PATCHBAY_LOCAL_MODEL: undefined, PATCHBAY_CONFIG: undefined, ...env }, stdin: null, timeoutMs: 0, until: 'close' });
}

describe('the CLI with the local model', () => {
  it('the README\'s offline command as written: `node scripts/make-tiny-gguf.mjs /tmp/tiny.gguf && PATCHBAY_LOCAL_MODEL=/tmp/tiny.gguf ./bin/patchbay chat "hello"` answers, in the default context, and the gauge shows that context', async () => {
    const home = tempDir();
    const model = join(tempDir(), 'tiny.gguf');
    execFileSync(process.execPath, [join(REPO, 'scripts', 'make-tiny-gguf.mjs'), model]);
    // No model settings at all (the gateway's free port is the test's, not the user's): the
    // default context (8192), the small-context tool set, the default reply limit (2048 tokens).
    const r = await cli(['chat', 'hello'], { PATCHBAY_LOCAL_MODEL: model, PATCHBAY_CONFIG: cliConfig() }, home);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toMatch(/^[a-z ]{20,}/);
    expect(r.stderr).not.toMatch(/context shift|does not fit/);
    // The gauge goes by the context the model got (8192, or more if the prompt and the 2048-token reply needed it).
    const gauge = /context ([\d,]+) of ([\d,]+) \((\d+)%\) tokens \(last: in [\d,]+, out 2,048\)/.exec(r.stderr);
    expect(gauge, r.stderr).not.toBeNull();
    const [used, size] = [gauge![1], gauge![2]].map((n) => Number(n.replace(/,/g, '')));
    expect(size).toBeGreaterThanOrEqual(8192);
    expect(used).toBeLessThanOrEqual(size);
  }, 240_000);

  it('`patchbay chat` downloads the default local model on first use and reports the download', async () => {
    const home = tempDir();
    const config = JSON.stringify({ providers: { local: { models: { tiny: { limit: { context: 8192, output: 16 } } } } }, gateway: { port: 0 } });
    const r = await cli(['chat', 'hello'], { PATCHBAY_LOCAL_MODEL: `${base}/tiny.gguf`, PATCHBAY_CONFIG: config }, home);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/Downloading 127\.0\.0\.1_\d+_tiny\.gguf: 100% \(/);
    expect(r.stdout.trim()).toMatch(/^[a-z ]+/);
    expect(readdirSync(join(home, '.patchbay', 'models'))).toEqual([expect.stringMatching(/tiny\.gguf$/)]);
  }, 90_000);

  it('`patchbay models` explains a bad model URI and never deletes a file it did not download', async () => {
    const home = tempDir();
    const listed = await cli(['models', 'list'], { PATCHBAY_LOCAL_MODEL: 'hf:only-a-user' }, home);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/local\/only-a-user {2}hf:only-a-user {2}unusable: .*hf:<user>\/<repo>\/<path\/to\/file\.gguf>/);
    const rm = await cli(['models', 'rm', 'tiny'], { PATCHBAY_LOCAL_MODEL: tiny.path }, home);
    expect(rm.code).toBe(1);
    expect(rm.stderr).toContain('is your own file');
    expect(existsSync(tiny.path)).toBe(true);
    const pulled = await cli(['models', 'pull', 'hf:only-a-user'], {}, home);
    expect(pulled.code).toBe(1);
    expect(pulled.stderr).toMatch(/^patchbay models: .*hf:<user>/);
    expect(pulled.stderr).not.toMatch(/\n\s+at /); // no stack trace
  }, 60_000);

  it('`patchbay doctor` shows the local model and where its file is', async () => {
    const r = await cli(['doctor'], { PATCHBAY_LOCAL_MODEL: tiny.path }, tempDir());
    expect(r.stdout).toContain('Default model: local/tiny');
    expect(r.stdout).toContain(`  - local/tiny: ${tiny.path} — ready (${tiny.path})`);
  }, 30_000);

  it('`patchbay models pull | list | rm` with a progress line, a cache entry and its removal', async () => {
    const home = tempDir();
    const env = { PATCHBAY_LOCAL_MODEL: `${base}/tiny.gguf` };
    const pulled = await cli(['models', 'pull'], env, home);
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(pulled.stderr).toMatch(/Downloading 127\.0\.0\.1_\d+_tiny\.gguf: 100% \[#{20}\] \(/);
    const path = pulled.stdout.trim();
    expect(existsSync(path)).toBe(true);
    expect(readFileSync(path).length).toBe(tiny.bytes);

    const listed = await cli(['models', 'list'], env, home);
    expect(listed.stdout).toContain(`local/tiny  ${base}/tiny.gguf  ready: ${path}`);

    const removed = await cli(['models', 'rm', 'tiny'], env, home);
    expect(removed.code, removed.stderr).toBe(0);
    expect(existsSync(path)).toBe(false);
    expect(readdirSync(join(home, '.patchbay', 'models'))).toEqual([]);

    const bad = await cli(['models', 'pull', `${base}/bad.gguf`], env, home);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/checksum mismatch/);
  }, 60_000);
});
