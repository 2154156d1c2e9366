/** `patchbay diagnostics`: one annotation per diagnostic of the annotated file. */
import type { Annotation, MetaResult, OpenCtxProviderImpl, Range } from '../protocol.js';

export interface DiagnosticLike {
  uri: string;
  /** LSP numeric severity (1 error … 4 hint) or a name. */
  severity: number | string;
  message: string;
  range: Range;
  source?: string;
}

export interface DiagnosticsDeps {
  /** Diagnostics for one document (or all, when `uri` is undefined). */
  get(uri?: string): Promise<DiagnosticLike[]>;
}

const severityNames: Record<number, string> = { 1: 'error', 2: 'warning', 3: 'info', 4: 'hint' };

export function severityName(s: number | string): string {
  if (typeof s === 'number') return severityNames[s] ?? String(s);
  return s.toLowerCase();
}

export function diagnostics(deps: DiagnosticsDeps): OpenCtxProviderImpl {
  return {
    meta(): MetaResult {
      return { name: 'patchbay diagnostics', annotations: {} };
    },
    async annotations(params): Promise<Annotation[]> {
      const all = await deps.get(params.uri);
      return all
        .filter((d) => d.uri === params.uri)
        .map((d) => ({
          uri: d.uri,
          range: d.range,
          item: {
            title: `[${severityName(d.severity)}] ${d.message}`,
            ui: { hover: { text: d.source ? `${d.source}: ${d.message}` : d.message } },
          },
        }));
    },
  };
}
