/**
 * How OpenCtx items and annotations read in a prompt. An item's `ai.content` is written for the
 * model (spec "Items": AssistantInfo), so it is used as is; otherwise the human-facing parts
 * (title, url, hover) are the best we have.
 */
import type { Item, Range } from './schema.js';

function attr(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/\n/g, ' ');
}

/** The text of one item, without its wrapper. */
export function itemBody(item: Item): string {
  if (typeof item.ai?.content === 'string') return item.ai.content;
  const hover = item.ui?.hover?.markdown ?? item.ui?.hover?.text;
  return [item.title, item.url, hover].filter((s): s is string => typeof s === 'string' && s.length > 0).join('\n');
}

export function renderItem(providerName: string, item: Item): string {
  const url = item.url ? ` url="${attr(item.url)}"` : '';
  return `<openctx provider="${attr(providerName)}" title="${attr(item.title)}"${url}>\n${itemBody(item)}\n</openctx>`;
}

export function renderItems(list: ReadonlyArray<{ providerName: string; item: Item }>): string {
  return list.map((x) => renderItem(x.providerName, x.item)).join('\n\n');
}

/** One annotation as the client hands it out. */
export interface ClientAnnotation {
  /** The provider's name. */
  provider: string;
  /** The provider's configured URI. */
  providerUri: string;
  uri: string;
  /** 0-based; when the provider gave none, the whole resource. */
  range: Range;
  item: Item;
}

export function renderAnnotations(list: readonly ClientAnnotation[]): string {
  return list
    .map((a) => {
      const lines = a.range.start.line === a.range.end.line ? `${a.range.start.line + 1}` : `${a.range.start.line + 1}-${a.range.end.line + 1}`;
      const url = a.item.url ? ` url="${attr(a.item.url)}"` : '';
      return `<openctx provider="${attr(a.provider)}" uri="${attr(a.uri)}" lines="${lines}" title="${attr(a.item.title)}"${url}>\n${itemBody(a.item)}\n</openctx>`;
    })
    .join('\n\n');
}

/** The range covering all of `content`. */
export function wholeRange(content: string): Range {
  const lines = content.split('\n');
  return { start: { line: 0, character: 0 }, end: { line: lines.length - 1, character: lines[lines.length - 1]?.length ?? 0 } };
}
