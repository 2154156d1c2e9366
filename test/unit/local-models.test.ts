/**
 * Local GGUF models: URI resolution, and downloads against a real HTTP server on 127.0.0.1
 * (first download, cache hit, resume after a cut connection or an abort, servers that ignore
 * Range, checksum checks, redirects, shared concurrent downloads) plus the cache listing.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type DownloadProgress, ensureModel, listCachedModels, removeCachedModel, resolveModelUri } from '../../src/peers/llm/local-models.js';
import { logToFile, logToStderr, setLogLevel } from '../../src/util/log.js';

const data = randomBytes(2 * 1024 * 1024 + 12_345);
const sha = createHash('sha256').update(data).digest('hex');
const wrongSha = createHash('sha256').update('something else').digest('hex');
const PIECE = 64 * 1024;

// ---------------------------------------------------------------------------------------------
// Temp dirs and the log

const dirs: string[] = [];
function tempDir(prefix = 'patchbay-models-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const logFile = join(tempDir('patchbay-models-log-'), 'log.txt');
logToFile(logFile);
logToStderr(false);
setLogLevel('info');
/** Log lines written while `fn` ran. */
async function logDuring(fn: () => Promise<unknown>): Promise<string> {
  const before = existsSync(logFile) ? readFileSync(logFile, 'utf8').length : 0;
  await fn();
  return readFileSync(logFile, 'utf8').slice(before);
}

// ---------------------------------------------------------------------------------------------
// The server

interface Behaviour {
  /** Extra headers on the answer that carries the file. */
  headers: Record<string, string>;
  /** Extra headers on the /hf/ redirect. */
  redirectHeaders: Record<string, string>;
  /** The first request gets about half the body, then the socket is destroyed. */
  cutFirst: boolean;
  /** Answer 200 with the whole file even when asked for a range. */
  ignoreRange: boolean;
  /** Send half the body, then nothing more until the client goes away. */
  stall: boolean;
  /** Milliseconds between 64 KiB pieces of the body (0: all at once). */
  pace: number;
  /** With `pace`: wait this long before the last piece (longer than the progress interval). */
  lastPause: number;
}

interface Seen {
  path: string;
  range?: string;
  status?: number;
}

const defaults = (): Behaviour => ({ headers: {}, redirectHeaders: {}, cutFirst: false, ignoreRange: false, stall: false, pace: 0, lastPause: 0 });
let behaviour = defaults();
let requests: Seen[] = [];
let server: Server;
let base = '';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function sendBody(req: IncomingMessage, res: ServerResponse, body: Buffer, first: boolean): Promise<void> {
  const half = Math.floor(body.length / 2);
  if (first && behaviour.cutFirst) {
    res.write(body.subarray(0, half), () => setTimeout(() => res.socket?.destroy(), 150));
    return;
  }
  if (behaviour.stall) {
    res.write(body.subarray(0, half));
    return;
  }
  if (!behaviour.pace) {
    res.end(body);
    return;
  }
  for (let i = 0; i < body.length && !req.socket.destroyed; i += PIECE) {
    if (i + PIECE >= body.length && behaviour.lastPause) await sleep(behaviour.lastPause);
    res.write(body.subarray(i, i + PIECE));
    await sleep(behaviour.pace);
  }
  res.end();
}

function serveFile(req: IncomingMessage, res: ServerResponse, seen: Seen, first: boolean): void {
  const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
  if (m && !behaviour.ignoreRange) {
    const start = Number(m[1]);
    if (start >= data.length) {
      seen.status = 416;
      res.writeHead(416, { 'content-range': `bytes */${data.length}` }).end();
      return;
    }
    seen.status = 206;
    res.writeHead(206, { ...behaviour.headers, 'content-length': data.length - start, 'content-range': `bytes ${start}-${data.length - 1}/${data.length}` });
    void sendBody(req, res, data.subarray(start), first);
    return;
  }
  seen.status = 200;
  res.writeHead(200, { ...behaviour.headers, 'content-length': data.length });
  void sendBody(req, res, data, first);
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  const seen: Seen = { path, range: req.headers.range };
  requests.push(seen);
  const first = requests.length === 1;
  if (path === '/model.gguf' || path === '/cdn/model.gguf') return serveFile(req, res, seen, first);
  if (path === '/hf/model.gguf') {
    seen.status = 302;
    res.writeHead(302, { ...behaviour.redirectHeaders, location: '/cdn/model.gguf?signature=not-for-logs' }).end();
    return;
  }
  seen.status = 404;
  res.writeHead(404, { 'content-type': 'text/plain' }).end('Entry not found');
}

beforeAll(async () => {
  server = createServer(handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
beforeEach(() => {
  behaviour = defaults();
  requests = [];
  server.closeAllConnections();
});

// ---------------------------------------------------------------------------------------------
// Helpers

const modelUri = (): string => `${base}/model.gguf`;
const finalPath = (home: string, uri = modelUri()): string => resolveModelUri(uri, home).path;
const partSize = (home: string): number => statSync(`${finalPath(home)}.part`).size;

function expectMonotonic(progress: DownloadProgress[]): void {
  for (let i = 1; i < progress.length; i++) expect(progress[i].received).toBeGreaterThanOrEqual(progress[i - 1].received);
}

/** The first call is cut off half way; returns the size of the .part it leaves. */
async function cutDownload(home: string, sha256?: string): Promise<number> {
  behaviour.cutFirst = true;
  await expect(ensureModel({ uri: modelUri(), sha256 }, home)).rejects.toThrow(/interrupted|ended early/);
  expect(existsSync(finalPath(home))).toBe(false);
  const size = partSize(home);
  expect(size).toBeGreaterThan(0);
  expect(size).toBeLessThan(data.length);
  return size;
}

// ---------------------------------------------------------------------------------------------

describe('resolveModelUri', () => {
  const home = '/srv/patchbay-home';

  it('maps hf: (and huggingface:) URIs to a resolve URL and a hf_ cache name', () => {
    const r = resolveModelUri('hf:bartowski/Qwen2.5-0.5B-GGUF/sub/dir/Qwen2.5-0.5B-Q4_K_M.gguf', home);
    expect(r).toEqual({
      kind: 'remote',
      url: 'https://huggingface.co/bartowski/Qwen2.5-0.5B-GGUF/resolve/main/sub/dir/Qwen2.5-0.5B-Q4_K_M.gguf',
      name: 'hf_bartowski_Qwen2.5-0.5B-GGUF_sub_dir_Qwen2.5-0.5B-Q4_K_M.gguf',
      path: join(home, 'models', 'hf_bartowski_Qwen2.5-0.5B-GGUF_sub_dir_Qwen2.5-0.5B-Q4_K_M.gguf'),
    });
    expect(resolveModelUri('huggingface:bartowski/Qwen2.5-0.5B-GGUF/sub/dir/Qwen2.5-0.5B-Q4_K_M.gguf', home)).toEqual(r);
  });

  it('keeps cache names filesystem-safe and stable', () => {
    const a = resolveModelUri('hf:user/repo/odd dir/ünïcode?#.gguf', home);
    expect(a.name).toMatch(/^[A-Za-z0-9._-]+\.gguf$/);
    expect(a.url).toBe('https://huggingface.co/user/repo/resolve/main/odd%20dir/%C3%BCn%C3%AFcode%3F%23.gguf');
    expect(resolveModelUri('hf:user/repo/odd dir/ünïcode?#.gguf', home).name).toBe(a.name);
    expect(resolveModelUri('hf:user/repo/no-extension', home).name).toBe('hf_user_repo_no-extension.gguf');
    const long = resolveModelUri(`hf:user/repo/${'x'.repeat(400)}.gguf`, home);
    expect(long.name.length).toBeLessThan(200);
    expect(long.name).toMatch(/\.gguf$/);
  });

  it('takes https URLs as remote sources; a query string changes the name', () => {
    const r = resolveModelUri('https://example.com/models/tiny.Q8_0.gguf', home);
    expect(r).toMatchObject({ kind: 'remote', url: 'https://example.com/models/tiny.Q8_0.gguf', name: 'example.com_models_tiny.Q8_0.gguf' });
    expect(r.path).toBe(join(home, 'models', 'example.com_models_tiny.Q8_0.gguf'));
    const q = resolveModelUri('https://example.com/models/tiny.Q8_0.gguf?download=true', home);
    expect(q.name).not.toBe(r.name);
    expect(q.name).toMatch(/^example\.com_models_tiny\.Q8_0_[0-9a-f]+\.gguf$/);
  });

  it('fetches hf: files from HF_ENDPOINT when set (a mirror), into the same cache name', () => {
    const uri = 'hf:user/repo/m.gguf';
    const plain = resolveModelUri(uri, home);
    expect(plain.url).toBe('https://huggingface.co/user/repo/resolve/main/m.gguf');
    const saved = process.env.HF_ENDPOINT;
    try {
      process.env.HF_ENDPOINT = 'https://hf-mirror.example/';
      expect(resolveModelUri(uri, home)).toMatchObject({ url: 'https://hf-mirror.example/user/repo/resolve/main/m.gguf', name: plain.name, path: plain.path });
      process.env.HF_ENDPOINT = 'http://127.0.0.1:8080/hf';
      expect(resolveModelUri(uri, home).url).toBe('http://127.0.0.1:8080/hf/user/repo/resolve/main/m.gguf');
      process.env.HF_ENDPOINT = 'http://mirror.example';
      expect(() => resolveModelUri(uri, home)).toThrow(/HF_ENDPOINT .*plain http is only allowed for loopback hosts/);
      process.env.HF_ENDPOINT = 'not a url';
      expect(() => resolveModelUri(uri, home)).toThrow(/HF_ENDPOINT "not a url" is not a URL/);
    } finally {
      if (saved === undefined) delete process.env.HF_ENDPOINT;
      else process.env.HF_ENDPOINT = saved;
    }
  });

  it('allows plain http only for loopback hosts', () => {
    expect(resolveModelUri('http://127.0.0.1:8080/m.gguf', home)).toMatchObject({ kind: 'remote', url: 'http://127.0.0.1:8080/m.gguf', name: '127.0.0.1_8080_m.gguf' });
    expect(resolveModelUri('http://localhost/m.gguf', home).kind).toBe('remote');
    expect(resolveModelUri('http://[::1]:9/m.gguf', home)).toMatchObject({ kind: 'remote', name: '1_9_m.gguf' });
    expect(() => resolveModelUri('http://example.com/m.gguf', home)).toThrow(/plain http is only allowed for loopback hosts/);
    expect(() => resolveModelUri('https://user:pw@example.com/m.gguf', home)).toThrow(/credentials/);
  });

  it('treats anything else as a file path, relative to cwd, with ~ expanded', () => {
    expect(resolveModelUri('models/x.gguf', home, '/work/project')).toEqual({ kind: 'file', path: '/work/project/models/x.gguf', name: 'x.gguf' });
    expect(resolveModelUri('/abs/y.gguf', home, '/work/project').path).toBe('/abs/y.gguf');
    expect(resolveModelUri('~/z.gguf', home).path).toBe(join(homedir(), 'z.gguf'));
    expect(resolveModelUri('file:///abs/w.gguf', home)).toMatchObject({ kind: 'file', path: '/abs/w.gguf' });
  });

  it('rejects bad hf: URIs and unknown schemes with the expected form', () => {
    const form = /expected hf:<user>\/<repo>\/<path\/to\/file\.gguf>/;
    expect(() => resolveModelUri('hf:user/repo', home)).toThrow(form);
    expect(() => resolveModelUri('hf:user/repo/', home)).toThrow(/names no file/);
    expect(() => resolveModelUri('hf:user', home)).toThrow(form);
    expect(() => resolveModelUri('hf:user/repo:Q4_K_M', home)).toThrow(/tags and branches/);
    expect(() => resolveModelUri('hf:user/../x.gguf', home)).toThrow(/not a valid path segment/);
    expect(() => resolveModelUri('hf:user/repo//x.gguf', home)).toThrow(/not a valid path segment/);
    expect(() => resolveModelUri('ftp://example.com/m.gguf', home)).toThrow(/unsupported model URI scheme "ftp:"/);
    expect(() => resolveModelUri('  ', home)).toThrow(/empty/);
  });
});

describe('ensureModel: file sources', () => {
  it('returns the absolute path of an existing file, relative to cwd', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'local.gguf'), 'GGUF');
    expect(await ensureModel({ uri: 'local.gguf' }, tempDir(), { cwd: dir })).toBe(join(dir, 'local.gguf'));
  });

  it('fails clearly when the file is missing or a directory', async () => {
    const dir = tempDir();
    await expect(ensureModel({ uri: 'missing.gguf' }, dir, { cwd: dir })).rejects.toThrow(`model file not found: ${join(dir, 'missing.gguf')} (from "missing.gguf")`);
    await expect(ensureModel({ uri: dir }, dir)).rejects.toThrow(/model path is not a file/);
  });

  it('rejects a malformed sha256', async () => {
    await expect(ensureModel({ uri: modelUri(), sha256: 'abc' }, tempDir())).rejects.toThrow(/invalid sha256 .*64 hex/);
    expect(requests).toHaveLength(0);
  });
});

describe('ensureModel: another process downloading the same file', () => {
  it('waits while a live process holds the lock and uses the file it saved, without a request', async () => {
    const home = tempDir();
    const path = finalPath(home);
    mkdirSync(join(home, 'models'), { recursive: true });
    const { spawn } = await import('node:child_process');
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 5000)'], { stdio: 'ignore' });
    writeFileSync(`${path}.lock`, String(other.pid));
    const got = ensureModel({ uri: modelUri(), sha256: sha }, home);
    await sleep(300);
    expect(requests).toHaveLength(0); // still waiting
    writeFileSync(path, data); // the other process finishes…
    other.kill(); // …and goes away
    expect(await got).toBe(path);
    expect(requests).toHaveLength(0);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it('takes over a lock left by a process that is gone', async () => {
    const home = tempDir();
    const path = finalPath(home);
    mkdirSync(join(home, 'models'), { recursive: true });
    const { spawnSync } = await import('node:child_process');
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    writeFileSync(`${path}.lock`, gone);
    expect(await ensureModel({ uri: modelUri(), sha256: sha }, home)).toBe(path);
    expect(readFileSync(path).equals(data)).toBe(true);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });
});

describe('ensureModel: downloads', () => {
  it('downloads with throttled, monotonic progress, then serves the cache without a request', async () => {
    const home = tempDir();
    behaviour.pace = 10;
    behaviour.lastPause = 150;
    const progress: DownloadProgress[] = [];
    const started = Date.now();
    let path = '';
    const log = await logDuring(async () => {
      path = await ensureModel({ uri: modelUri() }, home, { onProgress: (p) => progress.push({ ...p }) });
    });
    const elapsed = Date.now() - started;

    expect(path).toBe(finalPath(home));
    expect(readFileSync(path).equals(data)).toBe(true);
    expect(existsSync(`${path}.part`)).toBe(false);
    expect(requests).toEqual([{ path: '/model.gguf', range: undefined, status: 200 }]);
    expect(progress.length).toBeGreaterThan(1);
    expect(progress.length).toBeLessThanOrEqual(Math.ceil(elapsed / 100) + 2);
    expectMonotonic(progress);
    expect(progress.at(-1)).toEqual({ received: data.length, total: data.length, resumedFrom: 0 });
    // 100% is reported once, after the file is checked, however the last chunk fell.
    expect(progress.filter((p) => p.received === data.length)).toHaveLength(1);
    expect(progress.every((p) => p.total === data.length && p.resumedFrom === 0)).toBe(true);
    expect(log).toMatch(/\[llm\] .*could not be verified/);
    expect(statSync(join(home, 'models')).mode & 0o777).toBe(0o700);

    expect(await ensureModel({ uri: modelUri() }, home)).toBe(path);
    expect(requests).toHaveLength(1);
  });

  it('resumes a cut download with Range and verifies the sha256 from x-linked-etag', async () => {
    const home = tempDir();
    behaviour.headers = { 'x-linked-etag': `"${sha}"` };
    const size = await cutDownload(home);

    const progress: DownloadProgress[] = [];
    let path = '';
    const log = await logDuring(async () => {
      path = await ensureModel({ uri: modelUri() }, home, { onProgress: (p) => progress.push({ ...p }) });
    });
    expect(requests[1]).toEqual({ path: '/model.gguf', range: `bytes=${size}-`, status: 206 });
    expect(readFileSync(path).equals(data)).toBe(true);
    expect(existsSync(`${path}.part`)).toBe(false);
    expect(progress[0].resumedFrom).toBe(size);
    expect(progress[0].received).toBeGreaterThan(size);
    expect(progress.at(-1)).toEqual({ received: data.length, total: data.length, resumedFrom: size });
    expect(log).toMatch(/resuming the download .* at \d+ bytes/);
    expect(log).toMatch(/sha256 verified/);
    expect(log).not.toMatch(/could not be verified/);
  });

  it('resumes a cut download and verifies against src.sha256', async () => {
    const home = tempDir();
    const size = await cutDownload(home, sha);
    const path = await ensureModel({ uri: modelUri(), sha256: sha.toUpperCase() }, home);
    expect(requests.map((r) => [r.range, r.status])).toEqual([
      [undefined, 200],
      [`bytes=${size}-`, 206],
    ]);
    expect(createHash('sha256').update(readFileSync(path)).digest('hex')).toBe(sha);
  });

  it('deletes the download on a checksum mismatch', async () => {
    const home = tempDir();
    const err = await ensureModel({ uri: modelUri(), sha256: wrongSha }, home).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/checksum mismatch/);
    expect((err as Error).message).toContain(wrongSha);
    expect((err as Error).message).toContain(sha);
    expect(existsSync(finalPath(home))).toBe(false);
    expect(existsSync(`${finalPath(home)}.part`)).toBe(false);
  });

  it('checks a resumed download over the whole file, prefix included', async () => {
    const home = tempDir();
    behaviour.headers = { 'x-linked-etag': wrongSha };
    await cutDownload(home);
    await expect(ensureModel({ uri: modelUri() }, home)).rejects.toThrow(/checksum mismatch/);
    expect(listCachedModels(home)).toEqual([]);
  });

  it('reports a 404 with the status and URL, leaving nothing behind', async () => {
    const home = tempDir();
    const uri = `${base}/nope.gguf`;
    await expect(ensureModel({ uri }, home)).rejects.toThrow(`could not download ${uri}: HTTP 404 Not Found; check the model URI`);
    expect(listCachedModels(home)).toEqual([]);
  });

  it('never shows a query string (signed URLs carry their secret there) in errors or the log', async () => {
    const home = tempDir();
    let message = '';
    const logged = await logDuring(async () => {
      await ensureModel({ uri: `${base}/nope.gguf?token=SECRET123` }, home).catch((e: Error) => (message = e.message));
    });
    expect(message).toContain(`could not download ${base}/nope.gguf?…: HTTP 404`);
    expect(`${message}\n${logged}`).not.toContain('SECRET123');
  });

  it('reports a refused connection as such', async () => {
    const s = createNetServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const port = (s.address() as AddressInfo).port;
    await new Promise((r) => s.close(r));
    await expect(ensureModel({ uri: `http://127.0.0.1:${port}/m.gguf` }, tempDir())).rejects.toThrow(
      new RegExp(`could not download http://127\\.0\\.0\\.1:${port}/m\\.gguf: connection refused \\(fetch failed: connect ECONNREFUSED`),
    );
  });

  it('starts over when the server ignores Range, and still verifies', async () => {
    const home = tempDir();
    behaviour.ignoreRange = true;
    behaviour.headers = { 'x-checksum-sha256': sha };
    const size = await cutDownload(home);
    const progress: DownloadProgress[] = [];
    const log = await logDuring(() => ensureModel({ uri: modelUri() }, home, { onProgress: (p) => progress.push({ ...p }) }));
    expect(requests[1]).toEqual({ path: '/model.gguf', range: `bytes=${size}-`, status: 200 });
    expect(readFileSync(finalPath(home)).equals(data)).toBe(true);
    expect(progress.every((p) => p.resumedFrom === 0)).toBe(true);
    expect(log).toMatch(/ignored the range request; starting over/);
    expect(log).toMatch(/sha256 verified/);
  });

  it('verifies and keeps a .part that was already complete (the server answers 416)', async () => {
    const home = tempDir();
    mkdirSync(join(home, 'models'), { recursive: true });
    writeFileSync(`${finalPath(home)}.part`, data);
    const path = await ensureModel({ uri: modelUri(), sha256: sha }, home);
    expect(requests.map((r) => r.status)).toEqual([416]);
    expect(readFileSync(path).equals(data)).toBe(true);
    expect(existsSync(`${path}.part`)).toBe(false);
  });

  it('takes the sha256 from a Hugging Face style redirect and never shows the signed target', async () => {
    const home = tempDir();
    const uri = `${base}/hf/model.gguf`;
    behaviour.redirectHeaders = { 'x-linked-etag': `"${sha}"` };
    const log = await logDuring(() => ensureModel({ uri }, home));
    expect(requests.map((r) => [r.path, r.status])).toEqual([
      ['/hf/model.gguf', 302],
      ['/cdn/model.gguf', 200],
    ]);
    expect(readFileSync(finalPath(home, uri)).equals(data)).toBe(true);
    expect(log).toMatch(/sha256 verified/);
    expect(log).not.toContain('signature');

    const other = tempDir();
    behaviour.redirectHeaders = { 'x-linked-etag': `"${wrongSha}"` };
    await expect(ensureModel({ uri }, other)).rejects.toThrow(/checksum mismatch/);
  });

  it('stops on abort, keeps the .part, and resumes next time', async () => {
    const home = tempDir();
    behaviour.stall = true;
    const ac = new AbortController();
    const first = ensureModel({ uri: modelUri() }, home, { signal: ac.signal, onProgress: (p) => p.received > 0 && ac.abort() });
    await expect(first).rejects.toMatchObject({ name: 'AbortError' });
    const size = partSize(home);
    expect(size).toBeGreaterThan(0);

    behaviour.stall = false;
    const path = await ensureModel({ uri: modelUri(), sha256: sha }, home);
    expect(requests[1]).toMatchObject({ range: `bytes=${size}-`, status: 206 });
    expect(readFileSync(path).equals(data)).toBe(true);
  });

  it('does nothing for an already aborted signal', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(ensureModel({ uri: modelUri() }, tempDir(), { signal: ac.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(requests).toHaveLength(0);
  });

  it('shares one download between concurrent calls', async () => {
    const home = tempDir();
    behaviour.pace = 5;
    const seenA: DownloadProgress[] = [];
    const seenB: DownloadProgress[] = [];
    const [a, b] = await Promise.all([
      ensureModel({ uri: modelUri(), sha256: sha }, home, { onProgress: (p) => seenA.push(p) }),
      ensureModel({ uri: modelUri(), sha256: sha }, home, { onProgress: (p) => seenB.push(p) }),
    ]);
    expect(a).toBe(b);
    expect(requests).toHaveLength(1);
    expect(readFileSync(a).equals(data)).toBe(true);
    expect(seenA.at(-1)?.received).toBe(data.length);
    expect(seenB.at(-1)?.received).toBe(data.length);
  });

  it('keeps a shared download going when only one of its callers aborts', async () => {
    const home = tempDir();
    behaviour.pace = 5;
    const ac = new AbortController();
    const leaving = ensureModel({ uri: modelUri() }, home, { signal: ac.signal });
    const staying = ensureModel({ uri: modelUri() }, home, { signal: new AbortController().signal });
    setTimeout(() => ac.abort(), 30);
    await expect(leaving).rejects.toMatchObject({ name: 'AbortError' });
    expect(readFileSync(await staying).equals(data)).toBe(true);
    expect(requests).toHaveLength(1);
  });
});

describe('the model cache', () => {
  it('lists .gguf and .part files by name', () => {
    const home = tempDir();
    expect(listCachedModels(home)).toEqual([]);
    const dir = join(home, 'models');
    mkdirSync(join(dir, 'sub.gguf'), { recursive: true });
    writeFileSync(join(dir, 'b.gguf'), 'bb');
    writeFileSync(join(dir, 'a.gguf.part'), 'a');
    writeFileSync(join(dir, 'a.gguf'), 'aaa');
    writeFileSync(join(dir, 'notes.txt'), 'not a model');
    expect(listCachedModels(home)).toEqual([
      { name: 'a.gguf', path: join(dir, 'a.gguf'), bytes: 3, partial: false },
      { name: 'a.gguf', path: join(dir, 'a.gguf.part'), bytes: 1, partial: true },
      { name: 'b.gguf', path: join(dir, 'b.gguf'), bytes: 2, partial: false },
    ]);
  });

  it('removes a model and its .part by cache name or by URI', () => {
    const home = tempDir();
    const dir = join(home, 'models');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'a.gguf'), 'a');
    writeFileSync(join(dir, 'a.gguf.part'), 'a');
    expect(removeCachedModel(home, 'a.gguf')).toEqual([join(dir, 'a.gguf'), join(dir, 'a.gguf.part')]);
    expect(removeCachedModel(home, 'a.gguf')).toEqual([]);

    const uri = 'hf:user/repo/m.gguf';
    const { name } = resolveModelUri(uri, home);
    writeFileSync(join(dir, `${name}.part`), 'm');
    expect(removeCachedModel(home, uri)).toEqual([join(dir, `${name}.part`)]);
    expect(listCachedModels(home)).toEqual([]);
  });

  it('refuses to remove a model another live patchbay is downloading (its .lock), not one with a stale lock', () => {
    const home = tempDir();
    const dir = join(home, 'models');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'a.gguf.part'), 'a');
    writeFileSync(join(dir, 'a.gguf.lock'), String(process.ppid)); // alive, and not this process
    expect(() => removeCachedModel(home, 'a.gguf')).toThrow(`a.gguf is being downloaded by patchbay (pid ${process.ppid}); cannot remove it now`);
    expect(existsSync(join(dir, 'a.gguf.part'))).toBe(true);
    writeFileSync(join(dir, 'a.gguf.lock'), '999999999'); // no such process
    expect(removeCachedModel(home, 'a.gguf')).toEqual([join(dir, 'a.gguf.part')]);
  });

  it('refuses anything outside <home>/models', () => {
    const home = tempDir();
    mkdirSync(join(home, 'models'), { recursive: true });
    writeFileSync(join(home, 'secret.gguf'), 'keep me');
    for (const bad of ['../secret.gguf', '..', '.', '', 'sub/../../secret.gguf', join(home, 'secret.gguf'), '..\\secret.gguf']) {
      expect(() => removeCachedModel(home, bad), bad).toThrow(/refusing to remove/);
    }
    expect(existsSync(join(home, 'secret.gguf'))).toBe(true);
  });

  it('downloads land in the listing', async () => {
    const home = tempDir();
    await ensureModel({ uri: modelUri(), sha256: sha }, home);
    expect(listCachedModels(home)).toEqual([{ name: resolveModelUri(modelUri(), home).name, path: finalPath(home), bytes: data.length, partial: false }]);
  });
});
