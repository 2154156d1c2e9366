/**
 * Merges extra request fields (a model's `extraPayload`, a variant's payload) over a request
 * body: objects merge key by key, anything else replaces, so `{"reasoning": {"effort": "high"}}`
 * keeps the body's other `reasoning` fields. Neither input is changed.
 */
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

export function mergePayload<T extends object>(body: T, extra: Obj | undefined): T {
  if (!extra || Object.keys(extra).length === 0) return body;
  return merge(body as Obj, extra) as T;
}

function merge(base: Obj, over: Obj): Obj {
  const out: Obj = { ...base };
  for (const [k, v] of Object.entries(over)) {
    // A payload comes from a config file: it must not reach an object's prototype.
    if (UNSAFE_KEYS.has(k)) continue;
    const cur = out[k];
    out[k] = isObj(cur) && isObj(v) ? merge(cur, v) : v;
  }
  return out;
}
