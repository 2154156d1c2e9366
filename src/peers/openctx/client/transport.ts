/**
 * How one provider is reached (spec "Provider API"): an HTTP endpoint answering POST
 * `{method, params, settings}` with `{result}` or `{error}`, or a JS module whose default export
 * implements the methods. Both sit behind `ProviderTransport` so the client never cares which.
 */
import { importModule } from '../../../util/import-module.js';
import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve as resolvePath } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { responseMessageSchema } from './schema.js';
import { displayUrl } from '../../../util/url.js';
import { MethodNotFound } from '../../../rpc/errors.js';

export type Method = 'meta' | 'mentions' | 'items' | 'annotations';

/** A provider's wire `{error}`, or a local failure (HTTP status, bad body, thrown exception). */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly code?: number,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

/** JSON-RPC "method not found": an old-style provider not implementing a method. */
export const METHOD_NOT_FOUND = MethodNotFound;

export interface ProviderTransport {
  readonly kind: 'http' | 'module';
  /** Whether the provider implements the method, when that can be known without calling it. */
  implements(method: Method): Promise<boolean | undefined>;
  call(method: Method, params: unknown, settings: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
  dispose(): void;
}

export type ProviderLocation = { kind: 'http'; url: string } | { kind: 'module'; file: string };

/** Where a configured URI points. `root` is the workspace root paths and packages resolve from. */
export function locateProvider(uri: string, root: string): ProviderLocation {
  if (/^https?:\/\//i.test(uri)) return { kind: 'http', url: uri };
  if (/^file:/i.test(uri)) return { kind: 'module', file: fileURLToPath(uri) };
  if (isAbsolute(uri)) return { kind: 'module', file: uri };
  if (uri.startsWith('./') || uri.startsWith('../') || uri.startsWith('.\\') || uri.startsWith('..\\')) {
    return { kind: 'module', file: resolvePath(root, uri) };
  }
  return { kind: 'module', file: resolvePackage(uri, root) };
}

/**
 * Resolves a package name the way the workspace would `require` it; for ESM-only packages whose
 * `exports` hide them from `require`, falls back to their `import`/`default` export or `main`.
 */
export function resolvePackage(name: string, root: string): string {
  const req = createRequire(join(root, 'package.json'));
  try {
    return req.resolve(name);
  } catch (e) {
    const dir = findPackageDir(name, root);
    if (!dir) throw new ProviderError(`cannot resolve package "${name}" from ${root}: ${(e as Error).message}`);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { exports?: unknown; main?: string; module?: string };
    const entry = importEntry(pkg.exports) ?? pkg.module ?? pkg.main ?? 'index.js';
    return join(dir, entry);
  }
}

function findPackageDir(name: string, root: string): string | undefined {
  for (let dir = root; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

function importEntry(exports: unknown): string | undefined {
  if (typeof exports === 'string') return exports;
  if (!exports || typeof exports !== 'object') return undefined;
  const obj = exports as Record<string, unknown>;
  const dot = '.' in obj ? obj['.'] : obj;
  if (typeof dot === 'string') return dot;
  if (!dot || typeof dot !== 'object') return undefined;
  const conds = dot as Record<string, unknown>;
  for (const key of ['import', 'node', 'default']) {
    const v = conds[key];
    const found = typeof v === 'string' ? v : importEntry(v);
    if (found) return found;
  }
  return undefined;
}

export function createTransport(location: ProviderLocation): ProviderTransport {
  return location.kind === 'http' ? new HttpTransport(location.url) : new ModuleTransport(location.file);
}

class HttpTransport implements ProviderTransport {
  readonly kind = 'http';
  constructor(private readonly url: string) {}

  async implements(): Promise<undefined> {
    return undefined;
  }

  async call(method: Method, params: unknown, settings: Record<string, unknown>, signal: AbortSignal): Promise<unknown> {
    let res: Response;
    try {
      res = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ method, params, settings }),
        signal,
      });
    } catch (e) {
      if (signal.aborted) throw e;
      // fetch says only "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND, …) is its cause.
      const cause = e instanceof Error && e.cause instanceof Error ? e.cause.message : e instanceof Error ? e.message : String(e);
      throw new ProviderError(`${method}: cannot reach ${displayUrl(this.url)}: ${cause}`);
    }
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ProviderError(res.ok ? `${method}: response is not JSON (${preview(text)})` : `${method}: HTTP ${res.status} ${res.statusText}`.trim());
    }
    const parsed = responseMessageSchema.safeParse(body);
    if (parsed.success && 'error' in parsed.data) throw new ProviderError(`${method}: ${parsed.data.error.message}`, parsed.data.error.code);
    if (!res.ok) throw new ProviderError(`${method}: HTTP ${res.status} ${res.statusText}`.trim());
    if (!parsed.success || !('result' in parsed.data)) throw new ProviderError(`${method}: response has neither "result" nor "error" (${preview(text)})`);
    return parsed.data.result;
  }

  dispose(): void {}
}

type ProviderModule = Partial<Record<Method, (params: unknown, settings: Record<string, unknown>) => unknown>> & { dispose?: () => void };

class ModuleTransport implements ProviderTransport {
  readonly kind = 'module';
  private loaded: Promise<ProviderModule> | undefined;
  private instance: ProviderModule | undefined;
  constructor(private readonly file: string) {}

  private load(): Promise<ProviderModule> {
    this.loaded ??= (importModule(pathToFileURL(this.file).href) as Promise<{ default?: unknown }>).then(
      (ns) => {
        const impl = ns.default;
        if (!impl || (typeof impl !== 'object' && typeof impl !== 'function')) {
          throw new ProviderError(`module ${this.file} has no default export implementing the provider methods`);
        }
        this.instance = impl as ProviderModule;
        return this.instance;
      },
      (e: unknown) => {
        throw new ProviderError(`cannot load provider module ${this.file}: ${e instanceof Error ? e.message : String(e)}`);
      },
    );
    return this.loaded;
  }

  async implements(method: Method): Promise<boolean> {
    return typeof (await this.load())[method] === 'function';
  }

  async call(method: Method, params: unknown, settings: Record<string, unknown>, signal: AbortSignal): Promise<unknown> {
    const impl = await this.load();
    signal.throwIfAborted();
    const fn = impl[method];
    if (typeof fn !== 'function') throw new ProviderError(`${method}: not implemented by this provider`, METHOD_NOT_FOUND);
    return await fn.call(impl, params, settings);
  }

  dispose(): void {
    try {
      this.instance?.dispose?.();
    } catch {
      /* a provider's dispose failing must not stop ours */
    }
  }
}

function preview(text: string): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > 80 ? `${t.slice(0, 80)}…` : t || 'empty body';
}

/**
 * Runs `work` with a signal that aborts at the deadline or when `outer` aborts, and settles by
 * then even if `work` ignores its signal (a JS module provider cannot be interrupted).
 */
export async function withDeadline<T>(ms: number, outer: AbortSignal | undefined, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ctl = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const onOuter = (): void => ctl.abort(outer?.reason ?? new ProviderError('cancelled'));
  if (outer?.aborted) throw new ProviderError('cancelled');
  outer?.addEventListener('abort', onOuter, { once: true });
  const stop = new Promise<never>((_, reject) => {
    timer = setTimeout(() => ctl.abort(new ProviderError(`timed out after ${ms} ms`)), ms);
    ctl.signal.addEventListener('abort', () => reject(ctl.signal.reason instanceof Error ? ctl.signal.reason : new ProviderError('cancelled')), { once: true });
  });
  stop.catch(() => {});
  try {
    return await Promise.race([work(ctl.signal), stop]);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onOuter);
  }
}
