/**
 * Small pieces every adapter shares: tool-argument parsing, reasoning open/close
 * bookkeeping, and the `<think>…</think>` splitter for servers that inline reasoning.
 */
import type { FinishReason, LlmEvent } from '../../shapes/llm.js';
import { isRecord } from '../../util/guards.js';

/** Parses streamed tool arguments; anything that is not a JSON object becomes `{}`. */
export function parseArgs(json: string | undefined | null): Record<string, unknown> {
  if (!json || !json.trim()) return {};
  try {
    const v: unknown = JSON.parse(json);
    return isRecord(v) ? v : {};
  } catch {
    return {};
  }
}

export function finishFromOpenAi(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'stop':
      return 'stop';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'length':
      return 'length';
    case 'content_filter':
      return 'refusal';
    default:
      return 'other';
  }
}

/** Tracks the one reasoning block that may be open while text streams. */
export class ReasoningTracker {
  private open: string | undefined;
  private n = 0;

  constructor(private readonly prefix = 'reasoning') {}

  get isOpen(): boolean {
    return this.open !== undefined;
  }

  /** Delta into the open block, opening one (with `id` or a generated id) first if needed. */
  delta(text: string, out: LlmEvent[], id?: string): void {
    if (this.open === undefined || (id !== undefined && id !== this.open)) {
      this.end(out);
      this.open = id ?? `${this.prefix}-${this.n++}`;
      out.push({ type: 'reasoningStart', id: this.open });
    }
    if (text) out.push({ type: 'reasoningDelta', id: this.open, text });
  }

  start(out: LlmEvent[], id?: string): string {
    this.end(out);
    this.open = id ?? `${this.prefix}-${this.n++}`;
    out.push({ type: 'reasoningStart', id: this.open });
    return this.open;
  }

  end(out: LlmEvent[], extra: { signature?: string; redacted?: string; itemId?: string; encrypted?: string } = {}): void {
    if (this.open === undefined) return;
    out.push({ type: 'reasoningEnd', id: this.open, ...definedOnly(extra) });
    this.open = undefined;
  }
}

function definedOnly<T extends object>(o: T): Partial<T> {
  const r: Partial<T> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) (r as Record<string, unknown>)[k] = v;
  return r;
}

const OPEN = '<think>';
const CLOSE = '</think>';

/**
 * Splits a text stream into text and reasoning at `<think>` / `</think>` tags, which
 * may be cut across chunks at any character. Holds back only a possible tag prefix.
 */
export class ThinkTagSplitter {
  private buf = '';
  private inThink = false;
  private trimNextText = false;

  constructor(private readonly reasoning: ReasoningTracker) {}

  feed(chunk: string, out: LlmEvent[]): void {
    this.buf += chunk;
    for (;;) {
      const tag = this.inThink ? CLOSE : OPEN;
      const i = this.buf.indexOf(tag);
      if (i >= 0) {
        this.emit(this.buf.slice(0, i), out);
        this.buf = this.buf.slice(i + tag.length);
        if (this.inThink) {
          this.reasoning.end(out);
          this.inThink = false;
          this.trimNextText = true;
        } else {
          this.reasoning.start(out);
          this.inThink = true;
        }
        continue;
      }
      const keep = partialTagSuffix(this.buf, tag);
      this.emit(this.buf.slice(0, this.buf.length - keep), out);
      this.buf = this.buf.slice(this.buf.length - keep);
      return;
    }
  }

  /** End of stream: whatever was held back is plain content. */
  flush(out: LlmEvent[]): void {
    this.emit(this.buf, out);
    this.buf = '';
    if (this.inThink) this.reasoning.end(out);
    this.inThink = false;
  }

  private emit(s: string, out: LlmEvent[]): void {
    if (!s) return;
    if (this.inThink) {
      this.reasoning.delta(s, out);
      return;
    }
    if (this.trimNextText) {
      // Models put a blank line after `</think>`; it is not part of the answer.
      s = s.replace(/^\s+/, '');
      if (!s) return;
      this.trimNextText = false;
    }
    if (this.reasoning.isOpen) this.reasoning.end(out);
    out.push({ type: 'text', text: s });
  }
}

/** Length of the longest suffix of `s` that is a proper prefix of `tag`. */
function partialTagSuffix(s: string, tag: string): number {
  const max = Math.min(s.length, tag.length - 1);
  for (let k = max; k > 0; k--) if (s.endsWith(tag.slice(0, k))) return k;
  return 0;
}

/** What every adapter needs to reach its server. */
export interface AdapterOptions {
  /** Base URL: `…/v1` for OpenAI-style APIs, the host root for Anthropic and Ollama. */
  url: string;
  /** Never logged; scrubbed from error messages. */
  key?: string;
  /**
   * The credential as of now, asked before each request (wins over `key`): a login's token is
   * refreshed while a client, and a turn holding it, lives. `bearer`: an OAuth access token, sent as
   * `Authorization: Bearer` where the API takes keys in another header (Anthropic's `x-api-key`).
   */
  auth?: () => AdapterAuth;
  /** Provider id used in error messages (e.g. `openai`, `my-vllm`). */
  provider?: string;
  /** Custom fetch (tests, proxies). */
  fetch?: typeof fetch;
}

export interface AdapterAuth {
  key?: string;
  bearer?: boolean;
}

/** The credential for the request about to be sent. */
export function currentAuth(o: AdapterOptions): AdapterAuth {
  return o.auth?.() ?? (o.key !== undefined ? { key: o.key } : {});
}
