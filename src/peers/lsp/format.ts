/**
 * LSP results as text the model reads: 1-based `path:line:col` where the column counts
 * characters (code points), converted from LSP's 0-based UTF-16 positions.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { lineAt, utf16ToColumn } from './documents.js';
import type { LspHost } from './types.js';
import { symbolKindName, type DocumentSymbol, type Location, type Range, type SymbolInformation } from '../../protocol/lsp/index.js';

type Diagnostic = ReturnType<LspHost['diagnostics']>[number];

/** `path:line:col error [source] message` (1-based). */
export function formatDiagnostic(path: string, d: Diagnostic, text: string | undefined): string {
  const { line, character } = d.range.start;
  const col = text === undefined ? character + 1 : utf16ToColumn(lineAt(text, line), character);
  const source = d.source ? ` [${d.source}${d.code ? ` ${d.code}` : ''}]` : '';
  return `${path}:${line + 1}:${col} ${d.severity}${source} ${d.message.replace(/\s*\n\s*/g, ' ')}`;
}

/** Reads the files locations point into (once each), to show columns and the line itself. */
export class SourceCache {
  private readonly texts = new Map<string, Promise<string | undefined>>();

  constructor(private readonly display: (path: string) => string) {}

  text(uri: string): Promise<string | undefined> {
    let t = this.texts.get(uri);
    if (!t) {
      t = uri.startsWith('file:') ? readFile(fileURLToPath(uri), 'utf8').catch(() => undefined) : Promise.resolve(undefined);
      this.texts.set(uri, t);
    }
    return t;
  }

  path(uri: string): string {
    return uri.startsWith('file:') ? this.display(fileURLToPath(uri)) : uri;
  }

  /** `path:line:col`, plus the trimmed source line when `withLine`. */
  async location(uri: string, range: Range, withLine = true): Promise<string> {
    const text = await this.text(uri);
    const { line, character } = range.start;
    const lineText = text === undefined ? undefined : lineAt(text, line);
    const col = lineText === undefined ? character + 1 : utf16ToColumn(lineText, character);
    const where = `${this.path(uri)}:${line + 1}:${col}`;
    return withLine && lineText?.trim() ? `${where}: ${lineText.trim().slice(0, 200)}` : where;
  }
}

export async function formatLocations(cache: SourceCache, locations: Location[], limit: number): Promise<string> {
  const lines = await Promise.all(locations.slice(0, limit).map((l) => cache.location(l.uri, l.range)));
  if (locations.length > limit) lines.push(`… and ${locations.length - limit} more`);
  return lines.join('\n');
}

type MarkedString = string | { language: string; value: string };
export function hoverText(contents: MarkedString | MarkedString[] | { kind: string; value: string }): string {
  const one = (m: MarkedString) => (typeof m === 'string' ? m : '```' + m.language + '\n' + m.value + '\n```');
  if (Array.isArray(contents)) return contents.map(one).join('\n\n');
  if (typeof contents === 'object' && 'kind' in contents) return contents.value;
  return one(contents);
}

/** A hierarchical outline: `Kind name detail (line:col)`, children indented. */
export async function formatDocumentSymbols(cache: SourceCache, uri: string, symbols: DocumentSymbol[] | SymbolInformation[]): Promise<string> {
  const out: string[] = [];
  const text = await cache.text(uri);
  const pos = (r: Range) => `${r.start.line + 1}:${text === undefined ? r.start.character + 1 : utf16ToColumn(lineAt(text, r.start.line), r.start.character)}`;
  const walk = (list: DocumentSymbol[], depth: number) => {
    for (const s of list) {
      out.push(`${'  '.repeat(depth)}${symbolKindName(s.kind)} ${s.name}${s.detail ? ` ${s.detail}` : ''} (${pos(s.selectionRange)})`);
      if (s.children?.length) walk(s.children, depth + 1);
    }
  };
  if (symbols.length && 'location' in symbols[0]) {
    for (const s of symbols as SymbolInformation[]) {
      const range = 'range' in s.location ? pos(s.location.range) : '?';
      out.push(`${symbolKindName(s.kind)} ${s.name}${s.containerName ? ` in ${s.containerName}` : ''} (${range})`);
    }
  } else walk(symbols as DocumentSymbol[], 0);
  return out.join('\n');
}

export async function formatWorkspaceSymbols(cache: SourceCache, symbols: SymbolInformation[], limit: number): Promise<string> {
  const lines = await Promise.all(
    symbols.slice(0, limit).map(async (s) => {
      const where = 'range' in s.location ? await cache.location(s.location.uri, s.location.range, false) : cache.path(s.location.uri);
      return `${symbolKindName(s.kind)} ${s.name}${s.containerName ? ` in ${s.containerName}` : ''} — ${where}`;
    }),
  );
  if (symbols.length > limit) lines.push(`… and ${symbols.length - limit} more`);
  return lines.join('\n');
}
