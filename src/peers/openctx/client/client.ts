/**
 * The OpenCtx client: patchbay calling the providers configured under `openctx.providers`
 * (spec: specs/openctx-protocol-0.1.md; newer `@openctx/protocol` meta fields understood too).
 *
 * Invariants:
 * - Every provider call, its `meta` included, settles within `timeoutMs` or the caller's signal,
 *   whichever is first, even when the provider ignores cancellation.
 * - Providers are called in parallel; one hanging, failing or unloadable provider delays no other
 *   and is reported through `log` and `status()`, never thrown from a fan-out method.
 * - Results come in config order, then the provider's own order.
 * - `meta` is fetched once per provider and cached until `dispose()`; a failed `meta` is retried
 *   on the next call.
 */
import type { Logger } from '../../../util/log.js';
import { enabledProviders, openCtxConfigSchema, type OpenCtxConfig, type OpenCtxConfigInput, type ProviderSettings } from './config.js';
import { annotationSchema, itemSchema, mentionSchema, metaResultSchema, parseList, type Item, type Mention, type MetaResult } from './schema.js';
import { matchMessageSelectors, matchSelectors, type SelectorResource } from './selectors.js';
import { createTransport, locateProvider, METHOD_NOT_FOUND, ProviderError, withDeadline, type Method, type ProviderTransport } from './transport.js';
import { renderItems, wholeRange, type ClientAnnotation } from './render.js';
import { fallbackName } from './names.js';
import { displayUrl } from '../../../util/url.js';

export interface OpenCtxClientOptions {
  config: OpenCtxConfigInput;
  /** Workspace roots (the first is the default `moduleBase`). */
  roots: string[];
  /**
   * Where relative paths and package names of module providers resolve from: the first root
   * when the user trusts it, else the user's config folder, so an untrusted folder cannot
   * plant a module under a name the user's config uses.
   */
  moduleBase?: string;
  log: Logger;
}

/** An OpenCtx mention in the shape of patchbay's Context. */
export interface ClientMention {
  uri: string;
  name: string;
  description?: string;
  mimeType: string;
  /** `openctx:<provider name>`. */
  server: string;
  /** The provider's configured URI. */
  provider: string;
}

/** One provider's mentions, handed out as soon as that provider answers. */
export interface MentionBatch {
  /** Position of the provider in `openctx.providers`. */
  index: number;
  provider: string;
  name: string;
  mentions: ClientMention[];
}

export interface ProviderStatus {
  provider: string;
  name?: string;
  ok: boolean;
  lastError?: string;
}

export interface ProviderMeta {
  provider: string;
  name: string;
  meta?: MetaResult;
  error?: string;
}

/** One provider as `doctor` shows it: its `meta` answered now, or the error it gave. */
export interface ProviderHealth {
  provider: string;
  name: string;
  ok: boolean;
  /** What its meta says it does: `mentions`, `items`, `annotations` (or spec 0.1 style). */
  capabilities: string[];
  /** Its meta has no `name`: `name` was derived from the config key. */
  unnamed: boolean;
  error?: string;
  /** The last failure of any call, when meta itself answered. */
  lastError?: string;
}

interface ProviderState {
  index: number;
  uri: string;
  /** The name used when meta has none (see names.ts). */
  fallback: string;
  /** The URI as logs and `doctor` show it: an URL's query and credentials may hold tokens. */
  label: string;
  settings: ProviderSettings;
  transport?: ProviderTransport;
  meta?: Promise<MetaResult>;
  metaValue?: MetaResult;
  lastError?: string;
  /** Methods an old-style provider answered "method not found" to. */
  unsupported: Set<Method>;
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: string };

const MAX_REMEMBERED_MENTIONS = 5000;

export class OpenCtxClient {
  readonly config: OpenCtxConfig;
  private roots: string[];
  private readonly moduleBase: string;
  private readonly log: Logger;
  private readonly providers: ProviderState[];
  /** `server + uri` → the mention as its provider returned it, for `items({mention})`. */
  private readonly mentionsSeen = new Map<string, { state: ProviderState; mention: Mention }>();
  private disposed = false;
  /** autoInclude entries already reported as naming no provider. */
  private readonly unmatchedWarned = new Set<string>();

  /** The workspace folders changed: selectors match paths relative to the new ones. */
  setRoots(roots: string[]): void {
    this.roots = [...roots];
  }

  constructor(options: OpenCtxClientOptions) {
    this.config = openCtxConfigSchema.parse(options.config);
    this.roots = options.roots;
    this.moduleBase = options.moduleBase ?? options.roots[0] ?? process.cwd();
    this.log = options.log;
    this.providers = enabledProviders(this.config).map((p, index) => ({
      index,
      uri: p.uri,
      fallback: fallbackName(p.uri),
      label: /^https?:\/\//i.test(p.uri) ? displayUrl(p.uri) : p.uri,
      settings: p.settings,
      unsupported: new Set<Method>(),
    }));
  }

  /** Every provider's meta (fetched in parallel, cached), e.g. for `doctor`. */
  async meta(signal?: AbortSignal): Promise<ProviderMeta[]> {
    return Promise.all(
      this.providers.map(async (p): Promise<ProviderMeta> => {
        const r = await this.run(p, 'meta', signal, () => this.fetchMeta(p));
        return r.ok ? { provider: p.uri, name: this.nameOf(p), meta: r.value } : { provider: p.uri, name: this.nameOf(p), error: r.error };
      }),
    );
  }

  /** Each provider's meta, asked now (cached when it answered before), with what it offers or why it fails. */
  async health(signal?: AbortSignal): Promise<ProviderHealth[]> {
    const metas = await this.meta(signal);
    return metas.map((m, i): ProviderHealth => {
      const { label, lastError } = this.providers[i]!;
      if (!m.meta) return { provider: label, name: label, ok: false, capabilities: [], unnamed: false, error: m.error ?? 'unknown error' };
      const meta = m.meta;
      const capabilities = isOldStyle(meta) ? ['spec 0.1 style (no capability objects)'] : (['mentions', 'items', 'annotations'] as const).filter((k) => meta[k] !== undefined);
      return { provider: label, name: m.name, ok: true, capabilities, unnamed: meta.name === undefined, ...(lastError !== undefined ? { lastError } : {}) };
    });
  }

  /** All providers' mentions for `query`, in config order, once every provider answered or timed out. */
  async mentions(query: string, signal?: AbortSignal, resource?: SelectorResource): Promise<ClientMention[]> {
    const batches = await this.mentionsStreaming(query, () => {}, signal, resource);
    return batches.flatMap((b) => b.mentions);
  }

  /**
   * Like `mentions`, but hands each provider's batch to `onBatch` the moment it arrives, so a caller
   * racing its own deadline keeps the fast providers' mentions whatever the slow ones do. Batches
   * arrive in completion order; `index` gives the stable order. Resolves with every batch, sorted.
   */
  async mentionsStreaming(query: string, onBatch: (batch: MentionBatch) => void, signal?: AbortSignal, resource?: SelectorResource): Promise<MentionBatch[]> {
    if (this.disposed) return [];
    const results = await Promise.all(
      this.providers.map(async (p): Promise<MentionBatch | undefined> => {
        const r = await this.run(p, 'mentions', signal, async (s) => {
          const meta = await this.fetchMeta(p);
          if (!(await this.canMention(p, meta, resource))) return undefined;
          const params = resource ? { query, uri: resource.uri } : { query };
          const raw = await p.transport!.call('mentions', params, p.settings, s);
          const { values, dropped } = parseList(mentionSchema, raw, 'mentions');
          for (const d of dropped) this.log.warn(`openctx ${p.label}: dropped invalid ${d}`);
          return values;
        });
        if (!r.ok || r.value === undefined) return undefined;
        const batch: MentionBatch = { index: p.index, provider: p.uri, name: this.nameOf(p), mentions: r.value.map((m) => this.toClientMention(p, m)) };
        try {
          onBatch(batch);
        } catch (e) {
          this.log.warn(`openctx: mentions callback failed: ${errorText(e)}`);
        }
        return batch;
      }),
    );
    return results.filter((b): b is MentionBatch => b !== undefined);
  }

  /** Renders `items({mention})` of the provider that produced the mention. Throws when that provider fails. */
  async itemsForMention(mention: { uri: string; server: string }, signal?: AbortSignal): Promise<string> {
    if (this.disposed) return '';
    let seen = this.mentionsSeen.get(mentionKey(mention.server, mention.uri));
    if (!seen) {
      const state = await this.providerForServer(mention.server, signal);
      if (!state) throw new ProviderError(`no OpenCtx provider answers to ${mention.server}`);
      seen = { state, mention: { title: mention.uri, uri: mention.uri } };
    }
    const { state, mention: original } = seen;
    const r = await this.run(state, 'items', signal, (s) => this.callItems(state, { mention: original }, s));
    if (!r.ok) throw new ProviderError(`${state.label}: ${r.error}`);
    return renderItems(r.value.map((item) => ({ providerName: this.nameOf(state), item })));
  }

  /** Renders `items({message})` of the `autoInclude` providers; '' when there are none or none answer. */
  async itemsForMessage(message: string, signal?: AbortSignal): Promise<string> {
    if (this.disposed || this.config.autoInclude.length === 0) return '';
    const wanted = new Set(this.config.autoInclude);
    const byUri = this.providers.filter((p) => wanted.has(p.uri));
    // Entries not naming a URI name a provider by its meta `name`: those need every provider's meta.
    const candidates = byUri.length === wanted.size ? byUri : this.providers;
    const results = await Promise.all(
      candidates.map(async (p) => {
        const r = await this.run(p, 'items', signal, async (s) => {
          const meta = await this.fetchMeta(p);
          // A provider answers to its URI and its name (meta `name`, else the one derived from the URI).
          if (!wanted.has(p.uri) && !wanted.has(meta.name ?? p.fallback)) return [];
          if (!matchMessageSelectors(meta.items?.messageSelectors, message)) return [];
          if (isOldStyle(meta) && (await p.transport!.implements('items')) === false) return [];
          return this.callItems(p, { message }, s);
        });
        return r.ok ? r.value.map((item) => ({ providerName: this.nameOf(p), item })) : [];
      }),
    );
    this.warnUnmatched(wanted);
    return renderItems(results.flat());
  }

  /** Annotations for a file from every provider whose selectors match it (path glob + content). */
  async annotations(uri: string, content: string, signal?: AbortSignal): Promise<ClientAnnotation[]> {
    if (this.disposed) return [];
    const results = await Promise.all(
      this.providers.map(async (p) => {
        const r = await this.run(p, 'annotations', signal, async (s) => {
          const meta = await this.fetchMeta(p);
          const selectors = meta.annotations !== undefined ? meta.annotations.selectors : isOldStyle(meta) ? meta.selector : [];
          if (!matchSelectors(selectors, { uri, content }, this.roots)) return [];
          if (isOldStyle(meta) && (await p.transport!.implements('annotations')) === false) return [];
          const raw = await p.transport!.call('annotations', { uri, content }, p.settings, s);
          const { values, dropped } = parseList(annotationSchema, raw, 'annotations');
          for (const d of dropped) this.log.warn(`openctx ${p.label}: dropped invalid ${d}`);
          return values;
        });
        if (!r.ok) return [];
        return r.value.map((a): ClientAnnotation => ({ provider: this.nameOf(p), providerUri: p.uri, uri: a.uri, range: a.range ?? wholeRange(content), item: a.item }));
      }),
    );
    return results.flat();
  }

  /** Each configured provider's health, for `doctor`. */
  status(): ProviderStatus[] {
    return this.providers.map((p) => ({
      provider: p.uri,
      ...(p.metaValue?.name !== undefined ? { name: p.metaValue.name } : {}),
      ok: p.lastError === undefined,
      ...(p.lastError !== undefined ? { lastError: p.lastError } : {}),
    }));
  }

  /** Drops cached meta and mentions and lets module providers release their resources. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const p of this.providers) {
      p.transport?.dispose();
      p.transport = undefined;
      p.meta = undefined;
      p.metaValue = undefined;
    }
    this.mentionsSeen.clear();
  }

  private async callItems(p: ProviderState, params: { message?: string; mention?: Mention }, signal: AbortSignal): Promise<Item[]> {
    const raw = await this.transportOf(p).call('items', params, p.settings, signal);
    const { values, dropped } = parseList(itemSchema, raw, 'items');
    for (const d of dropped) this.log.warn(`openctx ${p.label}: dropped invalid ${d}`);
    return values;
  }

  private async canMention(p: ProviderState, meta: MetaResult, resource: SelectorResource | undefined): Promise<boolean> {
    if (meta.mentions !== undefined) {
      const selectors = meta.mentions.selectors;
      if (selectors !== undefined && selectors.length === 0) return false;
      return resource === undefined || matchSelectors(selectors, resource, this.roots);
    }
    if (!isOldStyle(meta) || p.unsupported.has('mentions')) return false;
    return (await this.transportOf(p).implements('mentions')) !== false;
  }

  private async providerForServer(server: string, signal: AbortSignal | undefined): Promise<ProviderState | undefined> {
    const find = (): ProviderState | undefined => this.providers.find((p) => `openctx:${this.nameOf(p)}` === server);
    if (find()) return find();
    await this.meta(signal);
    return find();
  }

  private toClientMention(p: ProviderState, m: Mention): ClientMention {
    const server = `openctx:${this.nameOf(p)}`;
    const key = mentionKey(server, m.uri);
    this.mentionsSeen.delete(key);
    this.mentionsSeen.set(key, { state: p, mention: m });
    if (this.mentionsSeen.size > MAX_REMEMBERED_MENTIONS) {
      const oldest = this.mentionsSeen.keys().next().value;
      if (oldest !== undefined) this.mentionsSeen.delete(oldest);
    }
    const mimeType = typeof m.data?.mimeType === 'string' ? m.data.mimeType : 'text/plain';
    return { uri: m.uri, name: m.title, ...(m.description !== undefined ? { description: m.description } : {}), mimeType, server, provider: p.uri };
  }

  private nameOf(p: ProviderState): string {
    return p.metaValue ? (p.metaValue.name ?? p.fallback) : p.uri;
  }

  /** An autoInclude entry that names no provider would otherwise include nothing, silently. */
  private warnUnmatched(wanted: Set<string>): void {
    // Only once every meta is known: a provider failing now may be the one the entry names.
    if (this.providers.some((p) => !p.metaValue)) return;
    const names = new Set(this.providers.flatMap((p) => [p.uri, this.nameOf(p)]));
    for (const entry of wanted) {
      if (names.has(entry) || this.unmatchedWarned.has(entry)) continue;
      this.unmatchedWarned.add(entry);
      const known = this.providers.map((p) => `"${this.nameOf(p)}"`).join(', ') || 'none';
      this.log.warn(`openctx: autoInclude "${entry}" names no provider (their names: ${known}; a provider's URI works too)`);
    }
  }

  private transportOf(p: ProviderState): ProviderTransport {
    p.transport ??= createTransport(locateProvider(p.uri, this.moduleBase));
    return p.transport;
  }

  /** The cached meta, fetched under its own deadline so one caller's cancellation never poisons it. */
  private fetchMeta(p: ProviderState): Promise<MetaResult> {
    if (!p.meta) {
      const pending = withDeadline(this.config.timeoutMs, undefined, async (s) => {
        const raw = await this.transportOf(p).call('meta', {}, p.settings, s);
        const parsed = metaResultSchema.safeParse(raw);
        if (!parsed.success) throw new ProviderError(`meta: invalid result: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'result'}: ${i.message}`).join('; ')}`);
        return parsed.data;
      });
      p.meta = pending;
      pending.then(
        (m) => {
          if (p.meta !== pending) return;
          p.metaValue = m;
          if (m.name === undefined) {
            this.log.warn(`openctx ${p.label}: meta has no "name"; calling it "${p.fallback}" (mentions show openctx:${p.fallback}; autoInclude may use that name)`);
          }
        },
        () => {
          if (p.meta === pending) p.meta = undefined;
        },
      );
    }
    return p.meta;
  }

  /** Runs one provider operation under the deadline; records and logs the outcome, never throws. */
  private async run<T>(p: ProviderState, method: Method, signal: AbortSignal | undefined, work: (signal: AbortSignal) => Promise<T>): Promise<Outcome<T>> {
    try {
      const value = await withDeadline(this.config.timeoutMs, signal, async (s) => {
        this.transportOf(p);
        return work(s);
      });
      p.lastError = undefined;
      return { ok: true, value };
    } catch (e) {
      if (e instanceof ProviderError && e.code === METHOD_NOT_FOUND && method !== 'meta') {
        p.unsupported.add(method);
        return { ok: false, error: e.message };
      }
      const error = errorText(e);
      if (signal?.aborted) return { ok: false, error };
      p.lastError = `${method}: ${error}`.replace(new RegExp(`^${method}: ${method}: `), `${method}: `);
      this.log.warn(`openctx ${p.label}: ${p.lastError}`);
      return { ok: false, error };
    }
  }
}

function isOldStyle(meta: MetaResult): boolean {
  return meta.mentions === undefined && meta.items === undefined && meta.annotations === undefined;
}

function mentionKey(server: string, uri: string): string {
  return `${server}\n${uri}`;
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
