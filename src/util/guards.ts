/** A JSON object: not null, not an array. The one check every peer's input starts with. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `f()`, or undefined when it throws (for lookups where a failure simply means "none"). */
export function safely<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}
