/**
 * The diagnostics language servers report, per document, and the bounded wait for fresh ones.
 * The wait is bounded by the server's readiness, not by a fixed time: while the server is still
 * loading (starting, reporting work in progress, or not yet done with its first diagnostics) it
 * may take up to a generous cap; once it is ready, a short quiet time without an answer ends it.
 */
import type { LanguageServerProcess } from './server.js';
import type { Diagnostic as WireDiagnostic, PublishDiagnostics } from '../../protocol/lsp/index.js';
import type { EditorDiagnostic } from '../../shapes/tool.js';

/** Stored as the internal shape: `toDiagnostic` below is the one place LSP's turns into it. */
export type Diagnostic = EditorDiagnostic;
export interface Published {
  version?: number | null;
  seq: number;
  items: Diagnostic[];
}
/** How a wait ended; 'loading': out of time while the server was still loading. */
export type WaitEnd = 'ok' | 'timeout' | 'loading' | 'failed' | 'aborted';

/** LSP "DiagnosticSeverity" (1-4; absent means error) to the internal names. */
const SEVERITY = ['error', 'error', 'warning', 'info', 'hint'] as const;
/**
 * Servers without versioned diagnostics may publish in steps (syntax, then semantics): wait for
 * quiet. A server seen TRUST_AFTER times in a row to publish once per change is trusted from then
 * on (typescript-language-server is), so its answers are not held back by the wait (bench/lsp.ts).
 */
const SETTLE_MS = 250;
const TRUST_AFTER = 3;
/** How often a wait looks at the server's state (failed, still loading) between publishes. */
const TICK_MS = 100;

export interface WaitLimits {
  /** Once the server is ready, how long without an answer ends the wait. */
  quietMs: number;
  /** The wait never lasts longer, however busy the server is. */
  capMs: number;
}

export class DiagnosticsStore {
  private readonly published = new Map<string, Published>();
  private readonly listeners = new Set<(uri: string) => void>();
  private seq = 0;
  /** Per server: 'steps' once seen publishing in several steps, else how many single publishes in a row. */
  private readonly publishing = new Map<string, number | 'steps'>();

  get(uri: string): Published | undefined {
    return this.published.get(uri);
  }

  all(): Diagnostic[] {
    return [...this.published.values()].flatMap((p) => p.items);
  }

  /** A `textDocument/publishDiagnostics`, or a pulled full report (given the version it answers). */
  record(p: PublishDiagnostics): void {
    this.published.set(p.uri, { version: p.version, seq: ++this.seq, items: p.diagnostics.map((d) => toDiagnostic(p.uri, d)) });
    for (const l of [...this.listeners]) l(p.uri);
  }

  /** Forgets the diagnostics of files `gone` says are gone (their workspace folder was removed). */
  forget(gone: (uri: string) => boolean): void {
    for (const uri of [...this.published.keys()]) if (gone(uri)) this.published.delete(uri);
  }

  /** A pulled "unchanged" report: the items stand, now for this version. */
  confirm(uri: string, version: number): void {
    const p = this.published.get(uri);
    if (!p) return;
    this.published.set(uri, { ...p, version, seq: ++this.seq });
    for (const l of [...this.listeners]) l(uri);
  }

  /**
   * Resolves when `ok` holds for the uri's diagnostics (then quiet for SETTLE_MS if unversioned),
   * the server failed, the time is up (see the file comment), or on abort.
   */
  waitFor(uri: string, ok: (p: Published | undefined) => boolean, proc: LanguageServerProcess, server: string, limits: WaitLimits, signal: AbortSignal): Promise<WaitEnd> {
    return new Promise((done) => {
      let settle: NodeJS.Timeout | undefined;
      let matches = 0;
      const started = Date.now();
      let busyAt = started;
      const finish = (end: WaitEnd) => {
        clearInterval(tick);
        clearTimeout(settle);
        this.listeners.delete(check);
        signal.removeEventListener('abort', onAbort);
        done(end);
      };
      const onAbort = () => finish('aborted');
      const check = (u: string) => {
        if (u !== uri) return;
        const p = this.published.get(uri);
        if (!ok(p)) return;
        const seen = this.publishing.get(server);
        if (p!.version != null || (typeof seen === 'number' && seen >= TRUST_AFTER)) return finish('ok');
        // A second matching publish inside the quiet window: this server reports in steps.
        if (++matches > 1) this.publishing.set(server, 'steps');
        clearTimeout(settle);
        settle = setTimeout(() => {
          const now = this.publishing.get(server);
          if (now !== 'steps') this.publishing.set(server, (now ?? 0) + 1);
          finish('ok');
        }, SETTLE_MS);
      };
      const tick = setInterval(() => {
        if (settle) return; // an answer is in; only its quiet window is left
        if (proc.status === 'failed' || proc.status === 'stopped') return finish('failed');
        const now = Date.now();
        if (proc.loading()) busyAt = now;
        if (now - started >= limits.capMs || now - busyAt >= limits.quietMs) finish('timeout');
      }, TICK_MS);
      // A signal that is already aborted fires no event: end at once rather than at the cap.
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.listeners.add(check);
      check(uri);
    });
  }
}

/** LSP Diagnostic → EditorDiagnostic. */
export function toDiagnostic(uri: string, d: WireDiagnostic): Diagnostic {
  return {
    uri,
    severity: SEVERITY[d.severity ?? 1],
    message: d.message,
    range: d.range,
    ...(d.source !== undefined ? { source: d.source } : {}),
    ...(d.code !== undefined ? { code: String(d.code) } : {}),
  };
}
