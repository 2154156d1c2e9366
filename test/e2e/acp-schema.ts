/**
 * Every ACP message of an e2e test checked against ACP's own schema, both ways: the JSON Schema
 * the SDK ships (`@agentclientprotocol/sdk/schema/v1/schema.json`, ACP v1 as that SDK version
 * has it). Each of its method types names its method and the side that handles it (`x-method`,
 * `x-side`): a request's params are checked against `<X>Request` of its method, a notification's
 * against `<X>Notification`, a result against the `<X>Response` of the request it answers (found
 * by id), an error against `Error`. A method the stable schema lacks is looked up in the
 * unstable one shipped beside it (`schema.unstable.json`); one in neither is a violation, unless
 * it is an extension (`_…`). Formats (`int64`, `uint16`, …) are not checked.
 *
 * Violations are collected, not thrown (a throw inside a stream tap would only break the pipe):
 * the harness fails the test after it (useAcpProcs). A test that sends bad input on purpose
 * says so with `skip`; a message it writes raw to the child's stdin is not seen at all, and the
 * answer to it is checked only as far as it can be (an error's shape).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

export type Direction = 'toAgent' | 'toClient';
type Msg = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: unknown };
type Kind = 'Request' | 'Response' | 'Notification';

interface Defs {
  /** `<method>` → `<side>` → validator, per kind. */
  byKind: Record<Kind, Map<string, Map<string, ValidateFunction>>>;
  error: ValidateFunction;
}

let loaded: { stable: Defs; unstable: Defs } | undefined;

function schemaDir(): string {
  // The package's exports list neither its schema folder nor its package.json: found from its entry point (dist/v1/stable/acp.js).
  const entry = createRequire(import.meta.url).resolve('@agentclientprotocol/sdk');
  return join(dirname(entry), '..', '..', '..', 'schema', 'v1');
}

function compile(file: string): Defs {
  const schema = JSON.parse(readFileSync(join(schemaDir(), file), 'utf8')) as { $defs: Record<string, Record<string, unknown>> };
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema(schema, file);
  const byKind: Defs['byKind'] = { Request: new Map(), Response: new Map(), Notification: new Map() };
  for (const [name, def] of Object.entries(schema.$defs)) {
    const method = def['x-method'];
    const side = def['x-side'];
    const kind = (['Request', 'Response', 'Notification'] as const).find((k) => name.endsWith(k));
    if (typeof method !== 'string' || typeof side !== 'string' || !kind) continue;
    const sides = byKind[kind].get(method) ?? new Map<string, ValidateFunction>();
    sides.set(side, ajv.getSchema(`${file}#/$defs/${name}`)!);
    byKind[kind].set(method, sides);
  }
  return { byKind, error: ajv.getSchema(`${file}#/$defs/Error`)! };
}

function defs(): { stable: Defs; unstable: Defs } {
  loaded ??= { stable: compile('schema.json'), unstable: compile('schema.unstable.json') };
  return loaded;
}

/** The side that handles a message going this way (`x-side`); `protocol` messages go either way. */
const handler = (dir: Direction) => (dir === 'toAgent' ? 'agent' : 'client');

export interface Violation {
  direction: Direction;
  what: string;
  errors: string;
  message: string;
}

export class AcpSchemaCheck {
  readonly violations: Violation[] = [];
  /** How many messages were checked against a method's type (so a test can see the check ran). */
  checked = 0;
  /** Requests seen, by direction and id: what their answers are checked against. */
  private readonly pending: Record<Direction, Map<string, string>> = { toAgent: new Map(), toClient: new Map() };
  private readonly skipped: Record<Direction, Set<string>> = { toAgent: new Set(), toClient: new Set() };
  private readonly skips: Array<(m: Msg, dir: Direction) => boolean> = [];
  private readonly partial: Record<Direction, string> = { toAgent: '', toClient: '' };
  private readonly decoder = { toAgent: new TextDecoder(), toClient: new TextDecoder() };

  constructor() {
    // Compiled here, not in a stream's handler: a broken schema fails the test that made the check.
    defs();
  }

  /** Messages `pred` matches (and the answers to such requests) go unchecked: input a test sends bad on purpose. */
  skip(pred: (m: Msg, dir: Direction) => boolean): void {
    this.skips.push(pred);
  }

  /** Bytes of the ndjson stream going `dir`. */
  feed(dir: Direction, chunk: Uint8Array | string): void {
    const text = this.partial[dir] + (typeof chunk === 'string' ? chunk : this.decoder[dir].decode(chunk, { stream: true }));
    const lines = text.split('\n');
    this.partial[dir] = lines.pop()!;
    for (const line of lines) if (line.trim()) this.line(dir, line);
  }

  private line(dir: Direction, line: string): void {
    let msg: Msg;
    try {
      msg = JSON.parse(line) as Msg;
    } catch {
      this.violations.push({ direction: dir, what: 'a line that is not JSON', errors: '', message: line.slice(0, 300) });
      return;
    }
    if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) return this.bad(dir, 'a message that is not an object', '', msg);
    this.check(dir, msg);
  }

  private check(dir: Direction, msg: Msg): void {
    const id = msg.id === undefined || msg.id === null ? undefined : JSON.stringify(msg.id);
    const answered = dir === 'toAgent' ? 'toClient' : 'toAgent';
    if (this.skips.some((s) => s(msg, dir))) {
      if (id !== undefined && typeof msg.method === 'string') this.skipped[dir].add(id);
      return;
    }
    if (msg.jsonrpc !== '2.0') this.bad(dir, 'the JSON-RPC envelope', 'jsonrpc must be "2.0"', msg);
    if (typeof msg.method === 'string') {
      const kind: Kind = id === undefined ? 'Notification' : 'Request';
      if (kind === 'Request') this.pending[dir].set(id!, msg.method);
      return this.checkPart(dir, kind, msg.method, msg.params, msg);
    }
    if (id === undefined) return this.bad(dir, 'a message with neither method nor id', '', msg);
    // An answer: to a request that went the other way.
    if (this.skipped[answered].delete(id)) return;
    const method = this.pending[answered].get(id);
    this.pending[answered].delete(id);
    if (msg.error !== undefined) {
      if (!defs().stable.error(msg.error)) this.bad(dir, `the error answering ${method ?? `request ${id}`}`, text(defs().stable.error), msg);
      return;
    }
    if (!('result' in msg)) return this.bad(dir, `the answer to ${method ?? `request ${id}`}`, 'neither result nor error', msg);
    // The answer to a request the test wrote raw (not seen): only its envelope is known.
    if (method !== undefined) this.checkPart(dir, 'Response', method, msg.result, msg);
  }

  private checkPart(dir: Direction, kind: Kind, method: string, value: unknown, msg: Msg): void {
    // A Response is checked by the side that handled its request (`x-side` of the answered method).
    const side = kind === 'Response' ? handler(dir === 'toAgent' ? 'toClient' : 'toAgent') : handler(dir);
    const { stable, unstable } = defs();
    const pick = (d: Defs) => d.byKind[kind].get(method)?.get(side) ?? d.byKind[kind].get(method)?.get('protocol');
    const validate = pick(stable) ?? pick(unstable);
    if (!validate) {
      if (method.startsWith('_')) return; // extension methods: free-form
      return this.bad(dir, `${kind.toLowerCase()} ${method}`, `no ${kind} of ${method} handled by the ${side} in ACP's schema`, msg);
    }
    this.checked++;
    if (!validate(value ?? (kind === 'Response' ? null : undefined))) this.bad(dir, `${kind.toLowerCase()} ${method}`, text(validate), msg);
  }

  private bad(dir: Direction, what: string, errors: string, msg: unknown): void {
    this.violations.push({ direction: dir, what, errors, message: JSON.stringify(msg).slice(0, 600) });
  }

  /** The violations, one paragraph each, for a failing test's message. */
  report(): string {
    return this.violations.map((v) => `${v.direction === 'toAgent' ? 'client → agent' : 'agent → client'}: ${v.what}: ${v.errors}\n  ${v.message}`).join('\n');
  }
}

/** ajv's errors of the last run, short: path and message, at most 8. */
function text(v: ValidateFunction): string {
  return (v.errors ?? [])
    .slice(0, 8)
    .map((e) => `${e.instancePath || '/'} ${e.message ?? ''}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`)
    .join('; ');
}
