/**
 * GGUF model files for patchbay's built-in local model provider: where a model URI points, and
 * getting the file onto disk.
 *
 * A model URI is one of
 *   - `hf:<user>/<repo>/<path/to/file.gguf>` (or `huggingface:`): a file on the main branch of a
 *     Hugging Face repository (fetched from `HF_ENDPOINT` when set: a mirror);
 *   - an `https://` URL (plain `http://` only for loopback hosts);
 *   - anything else: a local file path (`~` expanded, relative paths against cwd), used in place.
 *
 * Remote files are cached as `<PATCHBAY_HOME>/models/<name>`, the name derived from the URI, so a
 * second run needs no network. A download goes to `<name>.part` and resumes with a `Range` request
 * after a cut connection or an abort. The finished file is checked against a sha256 (the
 * configured one, else the one the server announces: Hugging Face sends the LFS sha256 as
 * `x-linked-etag` on its redirect, which is why redirects are followed by hand) and only then
 * renamed into place. Concurrent calls for one file in this process share one download.
 */
import { displayUrl } from '../../util/url.js';
import { createHash, type Hash } from 'node:crypto';
import { createReadStream, existsSync, lstatSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, type Stats } from 'node:fs';
import { type FileHandle, mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorMessage, logger } from '../../util/log.js';
import { abortError } from './errors.js';
import { sleep } from './guard.js';
import { connectionFailure } from './net-errors.js';
import { loopbackHostnames } from '../../util/loopback.js';
import { isAlive } from '../../util/pid.js';

const log = logger('llm');

export interface ModelSource {
  uri: string;
  sha256?: string;
}

export interface Resolved {
  kind: 'file' | 'remote';
  /** Absolute local path the model is (or will be) at. */
  path: string;
  /** https URL for remote sources. */
  url?: string;
  /** Cache file name under <home>/models for remote sources, derived from the URI (e.g. hf_<user>_<repo>_<file>.gguf), stable and filesystem-safe. */
  name: string;
}

export interface DownloadProgress {
  /** Bytes on disk so far, the resumed prefix included. */
  received: number;
  /** Size of the whole file, when the server says. */
  total?: number;
  /** Where this download started: the size of the `.part` it resumed, or 0. */
  resumedFrom: number;
}

export interface CachedModel {
  /** Cache name (for a `.part`, the name the finished file will have). */
  name: string;
  path: string;
  bytes: number;
  /** An unfinished download (`<name>.part`). */
  partial: boolean;
}

interface EnsureOptions {
  signal?: AbortSignal;
  onProgress?: (p: DownloadProgress) => void;
  cwd?: string;
}

const HF_FORM = 'hf:<user>/<repo>/<path/to/file.gguf>';
const URI_FORMS = `${HF_FORM}, an https:// URL or a file path`;
const PART = '.part';
const PROGRESS_INTERVAL_MS = 100;
const MAX_REDIRECTS = 10;
const MAX_NAME = 180;

// ---------------------------------------------------------------------------------------------
// Resolving URIs

function modelsDir(home: string): string {
  return join(resolve(home), 'models');
}

export function resolveModelUri(uri: string, home: string, cwd: string = process.cwd()): Resolved {
  const s = uri.trim();
  if (!s) throw new Error(`the model URI is empty: expected ${URI_FORMS}`);
  const hf = /^(?:hf|huggingface):/i.exec(s);
  if (hf) return resolveHf(s, s.slice(hf[0].length), home);
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(s);
  if (!scheme) return resolveFile(s, cwd);
  const proto = scheme[1].toLowerCase();
  if (proto === 'https' || proto === 'http') return resolveUrl(s, home);
  if (proto === 'file') return resolveFile(fileURLToPath(s), cwd);
  throw new Error(`unsupported model URI scheme "${proto}:" in "${s}": expected ${URI_FORMS}`);
}

function resolveHf(uri: string, rest: string, home: string): Resolved {
  const bad = (why: string): Error => new Error(`invalid Hugging Face model URI "${uri}": ${why}; expected ${HF_FORM}`);
  const parts = rest.replace(/^\/+/, '').split('/');
  if (parts.slice(0, 2).some((p) => p.includes(':'))) throw bad('tags and branches after ":" are not supported');
  if (parts.length < 3 || parts.slice(2).join('') === '') throw bad('it names no file in the repository');
  for (const p of parts) {
    if (p === '' || p === '.' || p === '..' || /[\\\0-\x1f]/.test(p)) throw bad(`"${p}" is not a valid path segment`);
  }
  const [user, repo, ...file] = parts;
  const enc = (segments: string[]): string => segments.map(encodeURIComponent).join('/');
  const name = cacheName(['hf', user, repo, ...file]);
  return { kind: 'remote', url: `${hfEndpoint()}/${enc([user, repo])}/resolve/main/${enc(file)}`, path: join(modelsDir(home), name), name };
}

/**
 * Where `hf:` files are fetched from: `HF_ENDPOINT` (the variable Hugging Face's own tools read
 * for a mirror, e.g. https://hf-mirror.com), else huggingface.co. The cache name comes from
 * the `hf:` URI, not the endpoint, so a file fetched through a mirror is the same cached file.
 */
function hfEndpoint(): string {
  const v = process.env.HF_ENDPOINT?.trim();
  if (!v) return 'https://huggingface.co';
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new Error(`HF_ENDPOINT "${v}" is not a URL; expected e.g. https://hf-mirror.com`);
  }
  const problem = remoteUrlProblem(u);
  if (problem || u.search) throw new Error(`cannot use HF_ENDPOINT "${displayUrl(u.href)}": ${problem ?? 'a query string is not supported'}`);
  return u.href.replace(/\/+$/, '');
}

function resolveUrl(uri: string, home: string): Resolved {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    throw new Error(`invalid model URL "${uri}"`);
  }
  const problem = remoteUrlProblem(u);
  if (problem) throw new Error(`cannot use model URL "${uri}": ${problem}`);
  u.hash = '';
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const segments = u.pathname.split('/').map(safeDecode);
  const name = cacheName([host, u.port, ...segments].filter(Boolean), u.search || undefined);
  return { kind: 'remote', url: u.href, path: join(modelsDir(home), name), name };
}

/** Why a URL may not be downloaded from (also checked on every redirect), or undefined. */
function remoteUrlProblem(u: URL): string | undefined {
  if (u.username || u.password) return 'credentials in model URLs are not supported';
  if (u.protocol === 'https:') return undefined;
  if (u.protocol === 'http:') return loopbackHostnames.has(u.hostname) ? undefined : 'plain http is only allowed for loopback hosts (127.0.0.1, localhost, ::1); use https';
  return `unsupported protocol ${u.protocol}`;
}

function resolveFile(p: string, cwd: string): Resolved {
  const path = resolve(cwd, expandHome(p));
  return { kind: 'file', path, name: basename(path) };
}

function expandHome(p: string): string {
  if (p === '~') return homedir();
  if (/^~[\\/]/.test(p)) return join(homedir(), p.slice(2));
  return p;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

const shortHash = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 10);

/**
 * A stable, filesystem-safe file name: the parts joined by `_`, anything but letters, digits,
 * `.`, `-` and `_` replaced, always ending in `.gguf`. `salt` (a query string) adds a short hash so
 * URLs that differ only there get different files; very long names keep their ends and a hash.
 */
function cacheName(parts: string[], salt?: string): string {
  let base = parts
    .join('_')
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._-]+/, '');
  if (base.toLowerCase().endsWith('.gguf')) base = base.slice(0, -'.gguf'.length);
  if (salt !== undefined) base += `_${shortHash(salt)}`;
  if (base.length > MAX_NAME) base = `${base.slice(0, 80)}_${shortHash(base)}_${base.slice(-80)}`;
  return `${base || 'model'}.gguf`;
}

// ---------------------------------------------------------------------------------------------
// ensureModel

interface Flight {
  promise: Promise<string>;
  /** Aborts the shared download; used once every caller with a signal has given up. */
  controller: AbortController;
  /** Callers still waiting. A caller without a signal never leaves. */
  waiters: number;
  listeners: Set<(p: DownloadProgress) => void>;
}

/** In-flight downloads by final path: concurrent calls for one file share one. */
const inflight = new Map<string, Flight>();

export async function ensureModel(src: ModelSource, home: string, opts: EnsureOptions = {}): Promise<string> {
  // No await before the flight is registered: two calls in one tick must find each other.
  const r = resolveModelUri(src.uri, home, opts.cwd);
  const expected = src.sha256 === undefined ? undefined : normalizeSha256(src.sha256, src.uri);
  if (opts.signal?.aborted) throw abortError(opts.signal.reason);
  if (r.kind === 'file') return checkLocalFile(r.path, src.uri);
  if (isCachedFile(r.path)) return r.path;
  const current = inflight.get(r.path);
  if (current?.controller.signal.aborted) {
    // Everyone left that download and it is still stopping: let it close the .part, then resume.
    await current.promise.catch(() => undefined);
    return ensureModel(src, home, opts);
  }
  return joinFlight(current ?? startFlight(src.uri, r, expected), opts);
}

function normalizeSha256(s: string, uri: string): string {
  const v = s
    .trim()
    .replace(/^sha256:/i, '')
    .toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(v)) throw new Error(`invalid sha256 for model "${uri}": expected 64 hex characters`);
  return v;
}

/** Local sources are used in place; they are not hashed (that would read gigabytes on every start). */
function checkLocalFile(path: string, uri: string): string {
  const from = uri.trim() === path ? '' : ` (from "${uri}")`;
  let st: Stats;
  try {
    st = statSync(path);
  } catch {
    throw new Error(`model file not found: ${path}${from}`);
  }
  if (!st.isFile()) throw new Error(`model path is not a file: ${path}${from}`);
  return path;
}

function isCachedFile(path: string): boolean {
  let st: Stats;
  try {
    st = statSync(path);
  } catch {
    return false;
  }
  if (!st.isFile()) throw new Error(`the model cache path ${path} exists but is not a file`);
  return true;
}

function startFlight(uri: string, r: Resolved, expected: string | undefined): Flight {
  const controller = new AbortController();
  const listeners = new Set<(p: DownloadProgress) => void>();
  const emit = (p: DownloadProgress): void => {
    for (const l of listeners) {
      try {
        l(p);
      } catch (e) {
        log.debug(`model download progress callback failed: ${errorMessage(e)}`);
      }
    }
  };
  const job: Job = { uri, url: r.url!, shown: displayUrl(r.url!), path: r.path, name: r.name, expected, signal: controller.signal, emit };
  const promise = download(job).finally(() => inflight.delete(r.path));
  const flight: Flight = { promise, controller, waiters: 0, listeners };
  inflight.set(r.path, flight);
  return flight;
}

/** Waits for a shared download; an aborted caller leaves, and the last one to leave stops it. */
function joinFlight(flight: Flight, opts: EnsureOptions): Promise<string> {
  const { signal, onProgress } = opts;
  flight.waiters++;
  if (onProgress) flight.listeners.add(onProgress);
  if (!signal) return flight.promise;
  return new Promise<string>((resolvePromise, reject) => {
    const leave = (): void => {
      flight.waiters--;
      if (onProgress) flight.listeners.delete(onProgress);
      if (flight.waiters === 0) flight.controller.abort(signal.reason);
      reject(abortError(signal.reason));
    };
    signal.addEventListener('abort', leave, { once: true });
    flight.promise.then(
      (v) => {
        signal.removeEventListener('abort', leave);
        resolvePromise(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', leave);
        reject(e);
      },
    );
  });
}

// ---------------------------------------------------------------------------------------------
// Downloading

interface Job {
  uri: string;
  url: string;
  /** `url` as logs and errors show it: no query string (signed URLs carry secrets there). */
  shown: string;
  /** Final path; the download goes to `path + '.part'`. */
  path: string;
  name: string;
  /** The configured sha256, if any. */
  expected?: string;
  signal: AbortSignal;
  emit: (p: DownloadProgress) => void;
}

interface Answer {
  res: Response;
  /** A sha256 announced by any hop (`x-linked-etag`, `x-checksum-sha256`). */
  announced?: string;
  redirected: boolean;
}

async function download(job: Job): Promise<string> {
  await mkdir(dirname(job.path), { recursive: true, mode: 0o700 });
  // Another patchbay (a second editor window, `patchbay models pull`) may be fetching the
  // same file into the same .part: one at a time, and the later one uses what the first saved.
  const unlock = await lockDownload(job);
  try {
    if (isCachedFile(job.path)) return job.path;
    return await downloadLocked(job);
  } finally {
    unlock();
  }
}

const LOCK_POLL_MS = 250;

/** `<path>.lock` holds the pid of the process downloading; a dead holder's lock is taken over. */
async function lockDownload(job: Job): Promise<() => void> {
  const lock = `${job.path}.lock`;
  let told = false;
  for (;;) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx', mode: 0o600 });
      return () => rmSync(lock, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const holder = lockHolder(job.path);
    if (holder === undefined) {
      rmSync(lock, { force: true }); // left by a process that is gone
      continue;
    }
    if (!told) log.info(`${job.name}: another patchbay (pid ${holder}) is downloading it; waiting`);
    told = true;
    await sleep(LOCK_POLL_MS, job.signal);
  }
}

/** The live process other than this one whose `<path>.lock` says it is downloading `path`. */
function lockHolder(path: string): number | undefined {
  const holder = Number(readFileSafe(`${path}.lock`));
  return Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder) ? holder : undefined;
}

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '';
  }
}

async function downloadLocked(job: Job): Promise<string> {
  const part = job.path + PART;
  let from = await sizeOf(part);
  log.info(from > 0 ? `${job.name}: resuming the download of ${job.shown} at ${from} bytes` : `${job.name}: downloading ${job.shown}`);
  let answer = await request(job, from);

  if (from > 0 && answer.res.status === 416) {
    // Nothing left to send: the .part may already be whole (stopped between download and rename).
    const total = parseContentRange(answer.res.headers.get('content-range'))?.total;
    await discard(answer.res);
    if (total === from) {
      job.emit({ received: from, total, resumedFrom: from });
      return finish(job, part, await hashFile(createHash('sha256'), part), job.expected ?? answer.announced);
    }
    log.info(`${job.name}: the server refused to resume at ${from} bytes; starting over`);
    from = 0;
    answer = await request(job, 0);
  } else if (answer.res.status === 206 && parseContentRange(answer.res.headers.get('content-range'))?.start !== from) {
    log.info(`${job.name}: the server answered with a different range than asked for; starting over`);
    await discard(answer.res);
    from = 0;
    answer = await request(job, 0);
  }

  const { res } = answer;
  if (res.status !== 200 && res.status !== 206) {
    await discard(res);
    throw httpFailure(job, res, answer.redirected);
  }
  if (res.status === 200 && from > 0) {
    log.info(`${job.name}: the server ignored the range request; starting over`);
    from = 0;
  }
  const expected = job.expected ?? answer.announced;
  const total = bodyTotal(res, from);
  const hash = createHash('sha256');
  if (from > 0) await hashFile(hash, part);
  const received = await writeBody(job, res, part, from, total, hash);

  if (total !== undefined && received < total) {
    throw new Error(`the download of ${job.shown} ended early at ${received} of ${total} bytes; run again to resume`);
  }
  if (total !== undefined && received > total) {
    await rm(part, { force: true });
    throw new Error(`the server sent ${received} bytes for ${job.shown} but announced ${total}; the download was deleted`);
  }
  job.emit({ received, total, resumedFrom: from });
  return finish(job, part, hash.digest('hex'), expected);
}

/**
 * Sends the request, following redirects by hand so every hop's headers can be read (Hugging
 * Face announces the sha256 on its redirect to the CDN, not on the CDN's answer).
 */
async function request(job: Job, from: number): Promise<Answer> {
  const headers: Record<string, string> = { 'accept-encoding': 'identity' };
  if (from > 0) headers.range = `bytes=${from}-`;
  let url = new URL(job.url);
  let announced: string | undefined;
  for (let hop = 0; ; hop++) {
    let res: Response;
    try {
      res = await fetch(url, { headers, redirect: 'manual', signal: job.signal });
    } catch (e) {
      if (job.signal.aborted) throw abortError(job.signal.reason);
      throw new Error(`could not download ${job.shown}: ${describeFailure(e)}`, { cause: e });
    }
    announced ??= announcedSha256(res.headers);
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || !location) return { res, announced, redirected: hop > 0 };
    await discard(res);
    if (hop >= MAX_REDIRECTS) throw new Error(`too many redirects while downloading ${job.shown}`);
    url = new URL(location, url);
    // The target is not shown: CDN redirects carry signed query strings.
    const problem = url.protocol === 'http:' && new URL(job.url).protocol !== 'http:' ? 'an https download may not continue over plain http' : remoteUrlProblem(url);
    if (problem) throw new Error(`refusing a redirect while downloading ${job.shown}: ${problem}`);
  }
}

/** Streams the body into the .part (appending after `from`), hashing as it goes; returns the size on disk. */
async function writeBody(job: Job, res: Response, part: string, from: number, total: number | undefined, hash: Hash): Promise<number> {
  let received = from;
  let last = 0;
  let fh: FileHandle | undefined;
  try {
    fh = await open(part, from > 0 ? 'a' : 'w');
    if (res.body) {
      for await (const chunk of res.body) {
        hash.update(chunk);
        await writeAll(fh, chunk);
        received += chunk.byteLength;
        const now = Date.now();
        // The last chunk's report is the caller's, once the file is checked.
        if (now - last >= PROGRESS_INTERVAL_MS && received !== total) {
          last = now;
          job.emit({ received, total, resumedFrom: from });
        }
      }
    }
    await fh.datasync();
  } catch (e) {
    if (job.signal.aborted) throw abortError(job.signal.reason);
    throw new Error(`the download of ${job.shown} was interrupted at ${received} bytes (${describeFailure(e)}); run again to resume`, { cause: e });
  } finally {
    await fh?.close();
  }
  return received;
}

async function writeAll(fh: FileHandle, chunk: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < chunk.byteLength) {
    const { bytesWritten } = await fh.write(chunk, offset);
    offset += bytesWritten;
  }
}

/** Checks the sha256 (deleting the .part on a mismatch) and renames the .part into place. */
async function finish(job: Job, part: string, actual: string, expected: string | undefined): Promise<string> {
  if (expected && actual !== expected) {
    await rm(part, { force: true });
    throw new Error(`checksum mismatch for ${job.uri}: expected sha256 ${expected}, got ${actual}; the download was deleted`);
  }
  if (expected) log.info(`${job.name}: sha256 verified`);
  else log.warn(`${job.name}: no sha256 is known for ${job.shown} (set one in the model config); the download could not be verified`);
  await rename(part, job.path);
  log.info(`${job.name}: saved to ${job.path}`);
  return job.path;
}

async function hashFile(hash: Hash, path: string): Promise<string> {
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.copy().digest('hex');
}

async function sizeOf(path: string): Promise<number> {
  try {
    const st = await stat(path);
    return st.isFile() ? st.size : 0;
  } catch {
    return 0;
  }
}

async function discard(res: Response): Promise<void> {
  try {
    await res.body?.cancel();
  } catch {
    // Nothing to do: the body is not wanted.
  }
}

/** Size of the whole file: from Content-Range for a 206, else Content-Length. */
function bodyTotal(res: Response, from: number): number | undefined {
  const length = parseLength(res.headers.get('content-length'));
  if (res.status !== 206) return length;
  const range = parseContentRange(res.headers.get('content-range'));
  if (range?.total !== undefined) return range.total;
  return length === undefined ? undefined : from + length;
}

function parseLength(v: string | null): number | undefined {
  if (v === null || !/^\s*\d+\s*$/.test(v)) return undefined;
  return Number(v);
}

/** `bytes <start>-<end>/<total|*>` or `bytes *\/<total>` (the 416 form). */
function parseContentRange(v: string | null): { start?: number; total?: number } | undefined {
  if (!v) return undefined;
  const m = /^bytes\s+(?:(\d+)-\d+|\*)\/(\d+|\*)\s*$/i.exec(v.trim());
  if (!m) return undefined;
  return { start: m[1] === undefined ? undefined : Number(m[1]), total: m[2] === '*' ? undefined : Number(m[2]) };
}

function announcedSha256(headers: Headers): string | undefined {
  for (const name of ['x-linked-etag', 'x-checksum-sha256']) {
    const v = headers
      .get(name)
      ?.trim()
      .replace(/^W\//, '')
      .replace(/^"(.*)"$/, '$1');
    if (v && /^[0-9a-f]{64}$/i.test(v)) return v.toLowerCase();
  }
  return undefined;
}

function httpFailure(job: Job, res: Response, redirected: boolean): Error {
  const status = `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
  const after = redirected ? ' (after a redirect)' : '';
  const hint = res.status === 401 || res.status === 403 ? '; the file may be private or gated' : res.status === 404 ? '; check the model URI' : '';
  return new Error(`could not download ${job.shown}: ${status}${after}${hint}`);
}

/**
 * `fetch` hides the useful part ("connect ECONNREFUSED …", "other side closed") in `cause`;
 * a connection failure leads with what it means ("host not found").
 */
function describeFailure(e: unknown): string {
  const msg = errorMessage(e);
  const cause = e instanceof Error && e.cause !== undefined ? errorMessage(e.cause) : '';
  const detail = cause && cause !== msg ? `${msg}: ${cause}` : msg;
  const conn = connectionFailure(e);
  return conn ? `${conn.cause} (${detail})` : detail;
}

// ---------------------------------------------------------------------------------------------
// The cache

/** Where a model's file is now (for `patchbay doctor` and `patchbay models list`). */
export type ModelFileState =
  | { kind: 'ready'; path: string }
  /** A file source that is not there. */
  | { kind: 'missing'; path: string }
  /** A remote source not downloaded yet: it will be, to `path`. */
  | { kind: 'remote'; path: string }
  | { kind: 'invalid'; reason: string };

export function modelFileState(uri: string, home: string): ModelFileState {
  let r: Resolved;
  try {
    r = resolveModelUri(uri, home);
  } catch (e) {
    return { kind: 'invalid', reason: errorMessage(e) };
  }
  if (existsSync(r.path)) return { kind: 'ready', path: r.path };
  return { kind: r.kind === 'file' ? 'missing' : 'remote', path: r.path };
}

/** `Downloading <name>: 45% (500 MB of 1100 MB)`: the one wording of download progress (chat and CLI). */
export function describeDownload(name: string, p: DownloadProgress): string {
  const mb = (b: number) => `${(b / 1e6).toFixed(b < 1e7 ? 1 : 0)} MB`;
  if (!p.total) return `Downloading ${name}: ${mb(p.received)}`;
  return `Downloading ${name}: ${Math.floor((100 * p.received) / p.total)}% (${mb(p.received)} of ${mb(p.total)})`;
}

export function listCachedModels(home: string): CachedModel[] {
  const dir = modelsDir(home);
  let files: string[];
  try {
    files = readdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const out: CachedModel[] = [];
  for (const file of files) {
    const partial = file.endsWith(PART);
    if (!partial && !file.toLowerCase().endsWith('.gguf')) continue;
    const path = join(dir, file);
    let st: Stats;
    try {
      st = statSync(path);
    } catch {
      continue;
    }
    if (!st.isFile()) continue;
    out.push({ name: partial ? file.slice(0, -PART.length) : file, path, bytes: st.size, partial });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : Number(a.partial) - Number(b.partial)));
}

export function removeCachedModel(home: string, nameOrUri: string): string[] {
  const dir = modelsDir(home);
  const name = cacheNameOf(nameOrUri, home, dir);
  // This process's downloads are in `inflight`; another patchbay's hold the lock.
  const holder = lockHolder(join(dir, name));
  if (inflight.has(join(dir, name)) || holder !== undefined) {
    throw new Error(`${name} is being downloaded${holder ? ` by patchbay (pid ${holder})` : ''}; cannot remove it now`);
  }
  const removed: string[] = [];
  for (const path of [join(dir, name), join(dir, name + PART)]) {
    if (dirname(path) !== dir) throw new Error(`refusing to remove ${path}: it is outside ${dir}`);
    let st: Stats;
    try {
      st = lstatSync(path);
    } catch {
      continue;
    }
    if (st.isDirectory()) continue;
    rmSync(path);
    removed.push(path);
  }
  return removed;
}

/** The cache name for a URI or a name as listed (a `.part` suffix is dropped); nothing that leaves the directory. */
function cacheNameOf(nameOrUri: string, home: string, dir: string): string {
  const s = nameOrUri.trim();
  if (/^(?:hf|huggingface):/i.test(s) || /^https?:\/\//i.test(s)) return resolveModelUri(s, home).name;
  const name = s.endsWith(PART) ? s.slice(0, -PART.length) : s;
  if (!name || name === '.' || name === '..' || /[\\/\0]/.test(name) || basename(name) !== name) {
    throw new Error(`refusing to remove "${nameOrUri}": not a file name in ${dir}; pass a cache name (see the model list) or a model URI`);
  }
  return name;
}
