/**
 * The internal Event stream shape (ARCHITECTURE.md "The one idea"): named, append-only, persisted.
 * Fed by gateway pushes (and any peer with events to keep); read back by the LLM through the
 * `read_event_stream` tool.
 */
export interface EventEntry {
  id: number;
  stream: string;
  /** Who produced it, e.g. the provider name. */
  source: string;
  chatId?: string;
  level: 'keep' | 'surface' | 'inject';
  text: string;
  metadata?: Record<string, unknown>;
  createdAt: number;
}

export interface EventFilter {
  stream?: string;
  chatId?: string;
  source?: string;
  level?: EventEntry['level'];
  /** Case-insensitive substring of the text. */
  contains?: string;
  /** Only entries after this id (for paging forward). */
  afterId?: number;
  /** Only entries at or after this time (ms since epoch). */
  since?: number;
  limit?: number;
}

export interface EventStreamStore {
  appendEvent(e: Omit<EventEntry, 'id' | 'createdAt'>): EventEntry;
  /** Appends soon, batched with others (a flood of pushes costs one transaction per batch). */
  queueEvent(e: Omit<EventEntry, 'id' | 'createdAt'>): void;
  queryEvents(filter: EventFilter): EventEntry[];
  /** Stream names with their entry counts. */
  streams(): Array<{ stream: string; count: number; last: number }>;
}
