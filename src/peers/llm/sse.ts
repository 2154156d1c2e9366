/**
 * A Server-Sent Events reader (https://html.spec.whatwg.org/multipage/server-sent-events.html)
 * that hands over every event of one network read at once. The SDKs' own parsers copy the
 * rest of the buffer after each event and resolve a promise per event; under a burst that
 * capped relay at ~50k chunks/s (bench/relay.ts), so the streaming path reads SSE itself.
 */
import { abortError, toLlmError } from './errors.js';
import { lineTooLong, MAX_LINE_CHARS } from './line-cap.js';
import { LlmError, type LlmEvent } from '../../shapes/llm.js';

export interface SseEvent {
  event: string | undefined;
  data: string;
}

/**
 * `provider` names the sender in the error for a line or an event's data longer than
 * MAX_LINE_CHARS (line-cap.ts): the stream is then stopped (the body cancelled) rather than
 * held in memory. A read with no newline is only appended, so a long line costs linear time.
 */
export async function* sseBatches(body: ReadableStream<Uint8Array>, provider = 'LLM'): AsyncGenerator<SseEvent[]> {
  const decoder = new TextDecoder();
  let rest = '';
  let event: string | undefined;
  let data: string[] = [];
  let dataChars = 0;
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      const decoded = done ? decoder.decode() : decoder.decode(value, { stream: true });
      if (!done && decoded.indexOf('\n') < 0) {
        rest += decoded;
        if (rest.length > MAX_LINE_CHARS) throw lineTooLong(provider);
        continue;
      }
      // At the end, a half-received event is dropped (as the SSE spec says); the adapter then
      // reports the stream as incomplete, which is retryable.
      const text = rest + decoded;
      const batch: SseEvent[] = [];
      let start = 0;
      for (;;) {
        const nl = text.indexOf('\n', start);
        if (nl < 0) break;
        const end = nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
        const line = text.slice(start, end);
        start = nl + 1;
        if (line === '') {
          const joined = data.length === 1 ? data[0] : data.join('\n');
          // An event with empty data is not dispatched (SSE spec, "dispatch the event").
          if (joined !== '') batch.push({ event, data: joined });
          event = undefined;
          data = [];
          dataChars = 0;
          continue;
        }
        if (line.length > MAX_LINE_CHARS) throw lineTooLong(provider);
        if (line.charCodeAt(0) === 58 /* ':' comment */) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.charCodeAt(0) === 32) value = value.slice(1);
        if (field === 'data') {
          dataChars += value.length;
          // Many short data lines add up to one event just as large.
          if (dataChars > MAX_LINE_CHARS) throw lineTooLong(provider);
          data.push(value);
        } else if (field === 'event') event = value;
      }
      rest = text.slice(start);
      if (rest.length > MAX_LINE_CHARS) throw lineTooLong(provider);
      if (batch.length) yield batch;
      if (done) return;
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => {});
  }
}

/** Merges adjacent text (and same-id reasoning) deltas: one event per read instead of per chunk. */
export function coalesce<T extends { type: string }>(events: T[]): T[] {
  if (events.length < 2) return events;
  const out: T[] = [];
  for (const ev of events) {
    const prev = out[out.length - 1] as (T & { text?: string; id?: string }) | undefined;
    const cur = ev as T & { text?: string; id?: string };
    if (prev && prev.type === cur.type && (cur.type === 'text' || (cur.type === 'reasoningDelta' && prev.id === cur.id))) {
      out[out.length - 1] = { ...prev, text: prev.text! + cur.text! };
    } else out.push(ev);
  }
  return out;
}

/**
 * Drives one streamed SSE response for an adapter: `handle` turns each event into LlmEvents
 * (pushing to `out`) and returns true once the response is complete. Events of one network
 * read are coalesced and yielded together; what arrived before an error is yielded before
 * the error is thrown. Ends with an AbortError when aborted, and a retryable LlmError when the
 * stream ends before the response was complete.
 */
export async function* relaySse(
  body: ReadableStream<Uint8Array>,
  ctx: { provider: string; key?: string; url?: string; signal: AbortSignal; /** Complete even without the end event (lenient servers). */ complete?: () => boolean },
  handle: (ev: SseEvent, out: LlmEvent[]) => boolean | void,
): AsyncGenerator<LlmEvent> {
  const out: LlmEvent[] = [];
  let done = false;
  try {
    for await (const batch of sseBatches(body, ctx.provider)) {
      for (const ev of batch) {
        try {
          done = handle(ev, out) === true;
        } catch (e) {
          if (out.length) yield* coalesce(out.splice(0));
          throw e;
        }
        if (done) break;
      }
      if (out.length) yield* coalesce(out.splice(0));
      if (done) break;
    }
  } catch (e) {
    throw toLlmError(e, ctx.provider, ctx.key, ctx.url);
  }
  // A read cut by abort can end quietly: report the abort.
  if (ctx.signal.aborted) throw abortError(ctx.signal.reason);
  if (!done && !ctx.complete?.()) throw new LlmError(`${ctx.provider}: the stream ended before the response was complete`, undefined, true);
}

/** The JSON payload of an SSE event; malformed data is a (non-retryable) LlmError. */
export function parseData<T>(ev: SseEvent, provider: string): T {
  try {
    return JSON.parse(ev.data) as T;
  } catch {
    throw new LlmError(`${provider}: malformed stream data: ${ev.data.slice(0, 200)}`, undefined, false);
  }
}

/** The body of a streamed response the SDK started (it has already turned HTTP errors into errors). */
export async function openStream(start: () => Promise<Response>, provider: string, key: string | undefined, url?: string): Promise<ReadableStream<Uint8Array>> {
  try {
    const res = await start();
    if (!res.body) throw new LlmError(`${provider}: the response had no body`, res.status, true);
    return res.body;
  } catch (e) {
    throw toLlmError(e, provider, key, url);
  }
}
