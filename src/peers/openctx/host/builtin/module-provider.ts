/**
 * Serve a user's own OpenCtx provider module (its default export, the shape OpenCtx JS
 * providers have) through the host. The module is imported on first use; a failing
 * import or a module without a usable default export answers `{error}` rather than crashing anything.
 */
import { isAbsolute, resolve } from 'node:path';
import { importModule } from '../../../../util/import-module.js';
import { pathToFileURL } from 'node:url';
import { ErrorCodes, OpenCtxError, type OpenCtxProviderImpl } from '../protocol.js';

type LoadedProvider = Partial<Record<'meta' | 'mentions' | 'items' | 'annotations' | 'dispose', (...a: unknown[]) => unknown>>;

export function moduleProvider(path: string): OpenCtxProviderImpl {
  const abs = isAbsolute(path) ? path : resolve(path);
  let loading: Promise<LoadedProvider> | undefined;

  const load = (): Promise<LoadedProvider> => {
    loading ??= (async () => {
      let mod: { default?: unknown };
      try {
        mod = (await importModule(pathToFileURL(abs).href)) as { default?: unknown };
      } catch (e) {
        throw new OpenCtxError(ErrorCodes.InternalError, `cannot load OpenCtx provider module ${abs}: ${e instanceof Error ? e.message : String(e)}`);
      }
      let p = mod.default;
      if (typeof p === 'function') {
        try {
          p = new (p as new () => unknown)();
        } catch {
          p = (p as () => unknown)();
        }
      }
      if (!p || typeof p !== 'object') {
        throw new OpenCtxError(ErrorCodes.InternalError, `OpenCtx provider module ${abs} has no default export object`);
      }
      if (typeof (p as LoadedProvider).meta !== 'function') {
        throw new OpenCtxError(ErrorCodes.InternalError, `OpenCtx provider module ${abs}: default export has no meta() method`);
      }
      return p as LoadedProvider;
    })();
    // A failed import is retried on the next call (the user may fix the file).
    loading.catch(() => {
      loading = undefined;
    });
    return loading;
  };

  const forward =
    (method: 'mentions' | 'items' | 'annotations') =>
    async (params: unknown, settings: unknown): Promise<never> => {
      const p = await load();
      const fn = p[method];
      return (fn ? await fn.call(p, params, settings) : []) as never;
    };

  return {
    async meta(params, settings) {
      const p = await load();
      return (await p.meta!.call(p, params, settings)) as never;
    },
    mentions: forward('mentions'),
    items: forward('items'),
    annotations: forward('annotations'),
    async dispose() {
      if (!loading) return;
      const p = await loading.catch(() => undefined);
      await p?.dispose?.call(p);
    },
  };
}
