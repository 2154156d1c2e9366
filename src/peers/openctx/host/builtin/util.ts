/** Small helpers shared by the built-in providers. */
export type Awaitable<T> = T | Promise<T>;

/** Case-insensitive substring match; an empty or missing query matches everything. */
export function matchesQuery(query: string | undefined, ...fields: Array<string | undefined>): boolean {
  const q = (query ?? '').trim().toLowerCase();
  if (!q) return true;
  return fields.some((f) => typeof f === 'string' && f.toLowerCase().includes(q));
}

export const DEFAULT_MENTION_LIMIT = 50;
