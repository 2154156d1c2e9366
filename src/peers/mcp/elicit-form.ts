/**
 * An MCP form-mode elicitation's requested schema as questions one at a time, and the user's
 * typed answers back as values of the schema. Pure: no I/O.
 * Spec: https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation#requested-schema
 * (flat object of primitives: string with format/length, number/integer with range, boolean,
 * single-select enum (`enum`, `oneOf`, legacy `enumNames`), multi-select array).
 */
import type { AskOption, AskQuestion } from '../../shapes/ask.js';

export type FieldValue = string | number | boolean | string[];

interface Choice {
  value: string;
  label: string;
}

export interface Field {
  name: string;
  title: string;
  description?: string;
  required: boolean;
  kind: 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'multi';
  choices?: Choice[];
  format?: 'email' | 'uri' | 'date' | 'date-time';
  /** minLength/minimum/minItems and their max, whichever the kind has. */
  min?: number;
  max?: number;
  default?: FieldValue;
}

/** The option that leaves an optional field out (its default, if any, then applies). */
export const SKIP = '(skip)';

type Raw = Record<string, unknown>;

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function choicesOf(p: Raw): Choice[] | undefined {
  if (Array.isArray(p.enum)) {
    const names = Array.isArray(p.enumNames) ? p.enumNames : [];
    return p.enum.map((v, i) => ({ value: String(v), label: typeof names[i] === 'string' ? names[i] : String(v) }));
  }
  if (Array.isArray(p.oneOf)) return p.oneOf.map((o: Raw) => ({ value: String(o?.const), label: str(o?.title) ?? String(o?.const) }));
  return undefined;
}

/** The fields in the server's order, or what is wrong with the schema (told to the server as an error). */
export function parseForm(schema: { properties: Record<string, unknown>; required?: string[] }): { fields: Field[] } | { error: string } {
  const required = new Set(schema.required ?? []);
  const unknown = [...required].filter((r) => !(r in schema.properties));
  if (unknown.length) return { error: `requestedSchema.required names fields that are not in properties: ${unknown.join(', ')}` };
  const fields: Field[] = [];
  for (const [name, raw] of Object.entries(schema.properties)) {
    const p = raw as Raw;
    const base = { name, title: str(p.title) ?? name, ...(str(p.description) ? { description: str(p.description) } : {}), required: required.has(name) };
    let f: Field;
    if (p.type === 'array') {
      const items = (p.items ?? {}) as Raw;
      const choices = choicesOf(Array.isArray(items.anyOf) ? { oneOf: items.anyOf } : items);
      f = { ...base, kind: 'multi', choices, min: num(p.minItems), max: num(p.maxItems) };
    } else if (p.type === 'boolean') f = { ...base, kind: 'boolean' };
    else if (p.type === 'number' || p.type === 'integer') f = { ...base, kind: p.type, min: num(p.minimum), max: num(p.maximum) };
    else {
      const choices = choicesOf(p);
      f = choices ? { ...base, kind: 'enum', choices } : { ...base, kind: 'string', min: num(p.minLength), max: num(p.maxLength), ...(p.format ? { format: p.format as Field['format'] } : {}) };
    }
    if (p.default !== undefined) f.default = p.default as FieldValue;
    const problem = check(f);
    if (problem) return { error: `requestedSchema field "${name}": ${problem}` };
    fields.push(f);
  }
  return { fields };
}

function check(f: Field): string | undefined {
  if ((f.kind === 'enum' || f.kind === 'multi') && !f.choices?.length) return 'it offers no choices';
  if (f.min !== undefined && f.max !== undefined && f.min > f.max) return `its minimum (${f.min}) is above its maximum (${f.max})`;
  if (f.default !== undefined) {
    const d = f.default;
    const ok =
      f.kind === 'boolean'
        ? typeof d === 'boolean'
        : f.kind === 'number' || f.kind === 'integer'
          ? typeof d === 'number'
          : f.kind === 'multi'
            ? Array.isArray(d) && d.every((v) => f.choices!.some((c) => c.value === v))
            : f.kind === 'enum'
              ? f.choices!.some((c) => c.value === d)
              : typeof d === 'string';
    if (!ok) return `its default ${JSON.stringify(d)} does not fit the field`;
  }
  return undefined;
}

function hint(f: Field): string {
  const range = (what: string) =>
    f.min !== undefined && f.max !== undefined ? ` (${what} ${f.min} to ${f.max})` : f.min !== undefined ? ` (${what} at least ${f.min})` : f.max !== undefined ? ` (${what} at most ${f.max})` : '';
  switch (f.kind) {
    case 'integer':
      return ` — a whole number${range('from')}`;
    case 'number':
      return ` — a number${range('from')}`;
    case 'string':
      return `${f.format ? ` — ${f.format}` : ''}${range('length')}`;
    case 'multi':
      return ` — any of: ${f.choices!.map((c) => c.label).join(', ')}; separate them with commas${range('count')}`;
    default:
      return '';
  }
}

/** One field's question; `retry` says why the previous answer was refused. */
export function questionFor(server: string, message: string, f: Field, index: number, total: number, retry?: string): Omit<AskQuestion, 'toolCallId'> {
  const head = `MCP server ${server} asks: ${message}`;
  const counter = total > 1 ? `(${index + 1}/${total}) ` : '';
  const line = `${counter}${f.title}${f.description ? `: ${f.description}` : ''}${hint(f)}`;
  // A lone field whose title is only its name adds nothing to the message.
  const showLine = total > 1 || f.description !== undefined || f.title !== f.name || hint(f) !== '';
  const question = [head, showLine ? line : '', retry ? `${retry} Please answer again.` : ''].filter(Boolean).join('\n\n');
  const options: AskOption[] = [];
  const isDefault = (v: string) => (f.default !== undefined && String(f.default) === v ? { description: 'default' } : {});
  if (f.kind === 'boolean') options.push({ label: 'Yes', ...isDefault('true') }, { label: 'No', ...isDefault('false') });
  else if (f.kind === 'enum') options.push(...f.choices!.map((c) => ({ label: c.label, ...isDefault(c.value) })));
  else if (f.default !== undefined) options.push({ label: Array.isArray(f.default) ? f.default.join(', ') : String(f.default), description: 'default' });
  if (!f.required) options.push({ label: SKIP, description: f.default !== undefined ? 'use the default' : 'leave it empty' });
  const closed = f.kind === 'boolean' || f.kind === 'enum';
  return { question, ...(options.length ? { options } : {}), allowFreeform: !closed };
}

export type Parsed = { ok: true; value: FieldValue | undefined } | { ok: false; error: string };

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function pick(f: Field, text: string): string | undefined {
  const exact = f.choices!.find((c) => c.label === text || c.value === text);
  if (exact) return exact.value;
  const lower = text.toLowerCase();
  return f.choices!.find((c) => c.label.toLowerCase() === lower || c.value.toLowerCase() === lower)?.value;
}

/** The user's answer as the field's value (undefined: left out), checked against the field. */
export function parseAnswer(f: Field, answer: string): Parsed {
  const text = answer.trim();
  // An optional field left blank is skipped, as an empty form field would be.
  if ((text === SKIP || text === '') && !f.required) return { ok: true, value: f.default };
  if (text === '') return { ok: false, error: `"${f.title}" needs an answer.` };
  const bad = (why: string): Parsed => ({ ok: false, error: `"${text}" is not valid for "${f.title}": ${why}.` });
  switch (f.kind) {
    case 'boolean': {
      if (/^(yes|y|true)$/i.test(text)) return { ok: true, value: true };
      if (/^(no|n|false)$/i.test(text)) return { ok: true, value: false };
      return bad('answer Yes or No');
    }
    case 'enum': {
      const v = pick(f, text);
      return v !== undefined ? { ok: true, value: v } : bad(`pick one of ${f.choices!.map((c) => c.label).join(', ')}`);
    }
    case 'multi': {
      const parts = text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const values = parts.map((s) => pick(f, s));
      const wrong = parts.filter((_, i) => values[i] === undefined);
      if (wrong.length) return bad(`${wrong.join(', ')} is not among ${f.choices!.map((c) => c.label).join(', ')}`);
      const unique = [...new Set(values as string[])];
      if (f.min !== undefined && unique.length < f.min) return bad(`pick at least ${f.min}`);
      if (f.max !== undefined && unique.length > f.max) return bad(`pick at most ${f.max}`);
      return { ok: true, value: unique };
    }
    case 'number':
    case 'integer': {
      const n = Number(text);
      if (!Number.isFinite(n)) return bad('not a number');
      if (f.kind === 'integer' && !Number.isInteger(n)) return bad('not a whole number');
      if (f.min !== undefined && n < f.min) return bad(`below the minimum ${f.min}`);
      if (f.max !== undefined && n > f.max) return bad(`above the maximum ${f.max}`);
      return { ok: true, value: n };
    }
    case 'string': {
      if (f.min !== undefined && text.length < f.min) return bad(`shorter than ${f.min} characters`);
      if (f.max !== undefined && text.length > f.max) return bad(`longer than ${f.max} characters`);
      if (f.format === 'email' && !EMAIL.test(text)) return bad('not an email address');
      if (f.format === 'uri' && !URL.canParse(text)) return bad('not a URI');
      if (f.format === 'date' && !(/^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(Date.parse(text)))) return bad('not a date (YYYY-MM-DD)');
      if (f.format === 'date-time' && !(/^\d{4}-\d{2}-\d{2}T/.test(text) && !Number.isNaN(Date.parse(text)))) return bad('not a date-time (YYYY-MM-DDThh:mm:ssZ)');
      return { ok: true, value: text };
    }
  }
}
