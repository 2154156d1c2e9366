/**
 * Merges extra request fields (a model's `extraPayload`, a variant's payload) over a request
 * body: objects merge key by key, anything else replaces, so `{"reasoning": {"effort": "high"}}`
 * keeps the body's other `reasoning` fields. Neither input is changed.
 */
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Top-level request fields a payload may never set, in any wire API patchbay speaks (or ECA's
 * Gemini): they carry what the model reads (`messages`, `input`, `system`, `instructions`,
 * `prompt`, `contents`…), what it can call (`tools`, OpenAI's hosted `mcp` tool; Anthropic's
 * `mcp_servers`), which model answers, whether the provider keeps the conversation (`store`,
 * `previous_response_id`, `conversation`, `background`, Gemini's cached content), or how the answer
 * comes back in a shape patchbay's stream readers do not expect (`stream`, `stream_options`, `n`,
 * `response_format`, `modalities`, `audio`; chat completions' hosted `web_search_options`).
 * patchbay builds these itself; the config loader reports a payload that names one (load.ts).
 */
export const REFUSED_PAYLOAD_KEYS: ReadonlySet<string> = new Set([
  'model',
  'messages',
  'input',
  'system',
  'instructions',
  'prompt',
  'contents',
  'systemInstruction',
  'system_instruction',
  'tools',
  'tool_choice',
  'functions',
  'function_call',
  'mcp_servers',
  'stream',
  'store',
  'previous_response_id',
  'conversation',
  'background',
  'cached_content',
  'cachedContent',
  'tool_config',
  'toolConfig',
  'web_search_options',
  'stream_options',
  'n',
  'response_format',
  'modalities',
  'audio',
]);

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The keys of `payload` that REFUSED_PAYLOAD_KEYS refuses, in its order. */
export function refusedPayloadKeys(payload: Obj): string[] {
  return Object.keys(payload).filter((k) => REFUSED_PAYLOAD_KEYS.has(k));
}

export function mergePayload<T extends object>(body: T, extra: Obj | undefined): T {
  if (!extra || Object.keys(extra).length === 0) return body;
  // A second guard behind the config loader's: whatever built `extra`, it cannot reroute the request.
  const allowed = Object.fromEntries(Object.entries(extra).filter(([k]) => !REFUSED_PAYLOAD_KEYS.has(k)));
  return merge(body as Obj, allowed) as T;
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
