/**
 * Does a tool's `parameters` compile as a JSON Schema? Checked with ajv, the validator the MCP
 * SDK also uses: the schema is validated against its meta-schema and compiled (which also
 * catches bad regex patterns and unresolvable `$ref`s). The compiled validator is discarded:
 * arguments are validated by the provider, we only refuse schemas the LLM APIs would reject.
 * ajv treats schemas as trusted code; providers are token holders, and the depth cap below
 * keeps a hostile schema from overflowing the stack (size is capped by the 2 MB message limit).
 */
import { Ajv, type AnySchemaObject } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';

const MAX_DEPTH = 32;
const CACHE_MAX = 500;

type Draft = 'draft-07' | '2019-09' | '2020-12';
const validators = new Map<Draft, Ajv>();
/** Serialized schema → error (or '' when it compiles); many providers declare the same tools. */
const cache = new Map<string, string>();

function ajvFor(draft: Draft): Ajv {
  let ajv = validators.get(draft);
  if (!ajv) {
    // strict: false — unknown keywords (`x-…`, `title` extensions) and formats are common in tool schemas.
    const opts = { strict: false, validateFormats: false, allErrors: false } as const;
    ajv = draft === '2020-12' ? new Ajv2020(opts) : draft === '2019-09' ? new Ajv2019(opts) : new Ajv(opts);
    validators.set(draft, ajv);
  }
  return ajv;
}

function draftOf(schema: Record<string, unknown>): Draft {
  const s = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (s.includes('2020-12')) return '2020-12';
  if (s.includes('2019-09')) return '2019-09';
  return 'draft-07';
}

function depth(v: unknown, d = 0): number {
  if (d > MAX_DEPTH || v === null || typeof v !== 'object') return d;
  let max = d;
  for (const x of Object.values(v)) {
    max = Math.max(max, depth(x, d + 1));
    if (max > MAX_DEPTH) break;
  }
  return max;
}

/** undefined when `schema` is a usable object JSON Schema, else why not. */
export function jsonSchemaError(schema: Record<string, unknown>): string | undefined {
  if (schema.type !== 'object') return 'parameters must be a JSON Schema with "type": "object"';
  if (depth(schema) > MAX_DEPTH) return `parameters is nested deeper than ${MAX_DEPTH} levels`;
  const key = JSON.stringify(schema);
  const known = cache.get(key);
  if (known !== undefined) return known || undefined;
  // The draft is chosen from `$schema`; the key itself is dropped so ajv need not know that URI.
  const { $schema: _ignored, ...rest } = schema;
  const ajv = ajvFor(draftOf(schema));
  let error = '';
  const copy = rest as AnySchemaObject;
  try {
    ajv.compile(copy);
  } catch (e) {
    error = `parameters is not a valid JSON Schema: ${e instanceof Error ? e.message : String(e)}`;
  } finally {
    ajv.removeSchema(copy);
  }
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value as string);
  cache.set(key, error);
  return error || undefined;
}
