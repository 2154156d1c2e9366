/** `patchbay event streams`: @-mention a named event stream and get its newest events as text. */
import { invalidParams, type Item, type Mention, type MetaResult, type OpenCtxProviderImpl } from '../protocol.js';
import { DEFAULT_MENTION_LIMIT, matchesQuery, type Awaitable } from './util.js';

export const STREAM_URI_PREFIX = 'patchbay-stream:';

export interface StreamSummary {
  stream: string;
  count: number;
  /** Time of the newest event (ms since epoch or ISO string), if any. */
  last?: number | string | null;
}

export interface StreamEvent {
  id: number | string;
  stream: string;
  source: string;
  level: string;
  text: string;
  metadata?: unknown;
  createdAt: number | string;
}

export interface StreamFilter {
  stream: string;
  /** Newest `limit` events. */
  limit: number;
}

export interface EventStreamsDeps {
  streams(): Awaitable<StreamSummary[]>;
  query(filter: StreamFilter): Awaitable<StreamEvent[]>;
  /** Events per item; default 50. */
  eventLimit?: number;
  limit?: number;
}

const iso = (t: number | string | null | undefined): string => {
  if (t === undefined || t === null || t === '') return '';
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? String(t) : d.toISOString();
};
const time = (t: number | string): number => (typeof t === 'number' ? t : new Date(t).getTime() || 0);

export function formatEvent(e: StreamEvent): string {
  return `${iso(e.createdAt)} [${e.level}] ${e.source}: ${e.text}`;
}

export function eventStreams(deps: EventStreamsDeps): OpenCtxProviderImpl {
  const eventLimit = deps.eventLimit ?? 50;
  const limit = deps.limit ?? DEFAULT_MENTION_LIMIT;
  return {
    meta(): MetaResult {
      return { name: 'patchbay event streams', mentions: {} };
    },

    async mentions(params): Promise<Mention[]> {
      const all = await deps.streams();
      return all
        .filter((s) => matchesQuery(params.query, s.stream))
        .slice(0, limit)
        .map((s) => ({
          title: s.stream,
          uri: STREAM_URI_PREFIX + encodeURIComponent(s.stream),
          description: `${s.count} event${s.count === 1 ? '' : 's'}${s.last ? `, last ${iso(s.last)}` : ''}`,
          data: { stream: s.stream },
        }));
    },

    async items(params): Promise<Item[]> {
      const mention = params.mention;
      if (!mention) return [];
      if (!mention.uri.startsWith(STREAM_URI_PREFIX)) {
        throw invalidParams(`mention.uri: expected ${STREAM_URI_PREFIX}<name>, got ${JSON.stringify(mention.uri)}`);
      }
      let stream: string;
      try {
        stream = decodeURIComponent(mention.uri.slice(STREAM_URI_PREFIX.length));
      } catch {
        throw invalidParams(`mention.uri: malformed stream name in ${JSON.stringify(mention.uri)}`);
      }
      if (!stream) throw invalidParams('mention.uri: empty stream name');
      const events = [...(await deps.query({ stream, limit: eventLimit }))].sort((a, b) => time(a.createdAt) - time(b.createdAt)).slice(-eventLimit);
      const content = events.length ? events.map(formatEvent).join('\n') : `(no events in stream ${stream})`;
      return [{ title: `stream ${stream} (${events.length} newest events)`, url: mention.uri, ai: { content } }];
    },
  };
}
