/**
 * Unknown config keys, reported instead of dropped silently: `"mcpServer"` or `"toolcall"`
 * would otherwise leave no servers and no rules with nothing said. Every level is checked
 * against the keys the schema has there (top level, toolCall, chat, providers.<name>, models,
 * mcpServers.<name>, languageServers.<name>, openctx, gateway…), with a did-you-mean.
 *
 * Keys that ECA's config has and patchbay does not implement are warnings that say so, not
 * typos: an ECA config should load here with a clear list of what patchbay ignores.
 */
import { z } from 'zod';
import { configSchema } from './schema.js';
import { PEERS } from '../peers/index.js';

export interface UnknownKey {
  /** Path segments from the layer's root. */
  path: string[];
  message: string;
  severity: 'error' | 'warning';
}

/**
 * ECA's keys per level (editor-code-assistant/eca docs/config.json), `*` for a name the user
 * chooses. Only the ones patchbay lacks ever show up here: the schema is checked first.
 */
const ECA_KEYS: Record<string, readonly string[]> = {
  '': [
    'agent',
    'autoCompactPercentage',
    'behavior',
    'chat',
    'chatRetentionDays',
    'commands',
    'completion',
    'connectTimeoutSeconds',
    'customTools',
    'defaultAgent',
    'defaultBehavior',
    'defaultModel',
    'disabledTools',
    'extraConfigs',
    'hooks',
    'includeParentAgentsFiles',
    'index',
    'lspTimeoutSeconds',
    'mcpKeepAliveSeconds',
    'mcpServers',
    'mcpTimeoutSeconds',
    'netrcFile',
    'network',
    'otlp',
    'plugins',
    'prompts',
    'providers',
    'remote',
    'rewrite',
    'rules',
    'skills',
    'streamIdleTimeoutSeconds',
    'toolCall',
    'variantsByModel',
    'welcomeMessage',
  ],
  toolCall: ['approval', 'editorNav', 'outputTruncation', 'readFile', 'shellCommand'],
  'toolCall.shellCommand': ['args', 'path', 'summaryMaxLength'],
  chat: ['autoSyncSystemPrompt', 'defaultTrust', 'title'],
  'providers.*': [
    'api',
    'auth',
    'cacheRetention',
    'completionUrlRelativePath',
    'extraHeaders',
    'fetchModels',
    'httpClient',
    'key',
    'keyRc',
    'models',
    'rateLimitMaxWaitSeconds',
    'requiresAuth',
    'retry',
    'retryRules',
    'thinkTagEnd',
    'thinkTagStart',
    'url',
  ],
  remote: ['bindHost', 'host', 'tls'],
  'providers.*.models.*': ['cost', 'extraHeaders', 'imageInput', 'limit', 'modelName', 'reasoningHistory'],
  'mcpServers.*': ['args', 'authScope', 'clientId', 'clientName', 'clientSecret', 'command', 'disabled', 'env', 'headers', 'oauthPort', 'url'],
};

/** Keys accepted anywhere at the top without a word: editors' JSON schema pointer. */
const QUIET_TOP_KEYS = new Set(['$schema']);

/** The schema the keys are checked against: the config's, with the entries other modules validate filled in. */
const checkedSchema = configSchema.extend(Object.assign({}, ...PEERS.map((p) => p.checkedConfig ?? {})) as Record<string, z.ZodType>);

type Def = { type: string; innerType?: z.ZodType; in?: z.ZodType; shape?: Record<string, z.ZodType>; valueType?: z.ZodType; element?: z.ZodType; options?: z.ZodType[] };

function defOf(s: z.ZodType): Def {
  return (s as unknown as { _zod: { def: Def } })._zod.def;
}

/** Strip defaults, optionals, nullables and pipes down to the shape that holds keys. */
function unwrap(s: z.ZodType): z.ZodType {
  for (let i = 0; i < 20; i++) {
    const d = defOf(s);
    if (d.innerType) s = d.innerType;
    else if (d.type === 'pipe' && d.in) s = d.in;
    else break;
  }
  return s;
}

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

export function findUnknownKeys(layer: Record<string, unknown>): UnknownKey[] {
  const out: UnknownKey[] = [];
  walk(layer, checkedSchema, [], [], out);
  return out;
}

function walk(value: unknown, schema: z.ZodType, path: string[], pattern: string[], out: UnknownKey[]): void {
  const s = unwrap(schema);
  const d = defOf(s);
  if (d.type === 'union') {
    // e.g. an OpenCtx provider's `true` or settings object: check against the option of its kind.
    const match = d.options?.find((o) => {
      const t = defOf(unwrap(o)).type;
      return isObj(value) ? t === 'object' || t === 'record' : Array.isArray(value) ? t === 'array' : false;
    });
    if (match) walk(value, match, path, pattern, out);
    return;
  }
  if (d.type === 'array' && Array.isArray(value) && d.element) {
    value.forEach((v, i) => walk(v, d.element!, [...path, String(i)], [...pattern, '*'], out));
    return;
  }
  if (!isObj(value)) return;
  if (d.type === 'record' && d.valueType) {
    for (const [k, v] of Object.entries(value)) walk(v, d.valueType, [...path, k], [...pattern, '*'], out);
    return;
  }
  if (d.type !== 'object' || !d.shape) return;
  const known = Object.keys(d.shape);
  for (const [k, v] of Object.entries(value)) {
    // Own keys only: `toString`, `constructor`… are on every object's prototype, not in the schema.
    if (Object.hasOwn(d.shape, k)) {
      walk(v, d.shape[k], [...path, k], [...pattern, k], out);
      continue;
    }
    if (path.length === 0 && QUIET_TOP_KEYS.has(k)) continue;
    out.push(report(k, [...path, k], pattern.join('.'), known));
  }
}

function report(key: string, path: string[], level: string, known: string[]): UnknownKey {
  if (Object.hasOwn(ECA_KEYS, level) && ECA_KEYS[level].includes(key)) {
    return { path, severity: 'warning', message: `"${key}" is an ECA setting patchbay does not implement; ignored` };
  }
  const guess = didYouMean(key, known);
  return { path, severity: 'error', message: `unknown key "${key}"${guess ? `; did you mean "${guess}"?` : `; expected one of ${known.map((k) => `"${k}"`).join(', ')}`}` };
}

/** The closest known key: same letters in another case, else a small edit distance. */
export function didYouMean(key: string, known: string[]): string | undefined {
  const lower = key.toLowerCase();
  const sameCase = known.find((k) => k.toLowerCase() === lower);
  if (sameCase) return sameCase;
  const limit = lower.length <= 4 ? 1 : lower.length <= 8 ? 2 : 3;
  let best: { key: string; d: number } | undefined;
  for (const k of known) {
    const d = editDistance(lower, k.toLowerCase());
    if (d <= limit && (!best || d < best.d)) best = { key: k, d };
  }
  return best?.key;
}

/** Damerau–Levenshtein (optimal string alignment): a swapped pair of letters is one edit. */
function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[rows - 1][cols - 1];
}
