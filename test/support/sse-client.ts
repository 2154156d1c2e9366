/**
 * A small SSE client over node:http for the remote API's tests: every event kept in order, and a
 * wait for the event a test expects (no sleeps).
 */
import { request, type IncomingMessage } from 'node:http';

export interface SseEvent {
  id?: string;
  event: string;
  data: unknown;
}

export interface HttpReply {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
  json: () => any;
}

/** One HTTP request with a text body read whole. */
export function httpRequest(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'GET', headers: opts.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

export class SseClient {
  readonly events: SseEvent[] = [];
  private buffer = '';
  private waiters: Array<{ pred: (e: SseEvent) => boolean; from: number; resolve: (e: SseEvent) => void; reject: (e: Error) => void; what: string }> = [];
  private ended = false;
  private req!: ReturnType<typeof request>;

  private constructor(
    readonly status: number,
    readonly headers: IncomingMessage['headers'],
  ) {}

  /** Opens the stream; resolves once the response headers are in (any status: a non-200 holds its body in `errorBody`). */
  static open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    return new Promise((resolve, reject) => {
      const req = request(url, { headers: { Accept: 'text/event-stream', ...headers } }, (res) => {
        const c = new SseClient(res.statusCode ?? 0, res.headers);
        c.req = req;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => c.feed(chunk));
        res.on('end', () => c.end());
        res.on('close', () => c.end());
        res.on('error', () => c.end());
        resolve(c);
      });
      req.on('error', reject);
      req.end();
    });
  }

  /** The response body of a refused stream (a JSON error), once it ended. */
  errorBody = '';

  private feed(chunk: string): void {
    if (this.status !== 200) {
      this.errorBody += chunk;
      return;
    }
    this.buffer += chunk;
    let cut: number;
    while ((cut = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, cut);
      this.buffer = this.buffer.slice(cut + 2);
      const e: Partial<SseEvent> & { dataLines: string[] } = { dataLines: [] };
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') e.id = value;
        else if (field === 'event') e.event = value;
        else if (field === 'data') e.dataLines.push(value);
      }
      if (e.event === undefined && !e.dataLines.length) continue; // a heartbeat
      const ev: SseEvent = { event: e.event ?? 'message', data: JSON.parse(e.dataLines.join('\n')), ...(e.id !== undefined ? { id: e.id } : {}) };
      this.events.push(ev);
      this.check();
    }
  }

  private check(): void {
    for (const w of [...this.waiters]) {
      const hit = this.events.slice(w.from).find(w.pred);
      if (hit) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(hit);
      }
    }
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const w of this.waiters.splice(0)) w.reject(new Error(`SSE stream ended before ${w.what}; got ${JSON.stringify(this.events.map((e) => e.event))}`));
    this.endWaiters.splice(0).forEach((f) => f());
  }

  private endWaiters: Array<() => void> = [];

  get isEnded(): boolean {
    return this.ended;
  }

  /** Resolves when the server ends the stream. */
  closed(): Promise<void> {
    return this.ended ? Promise.resolve() : new Promise((r) => this.endWaiters.push(r));
  }

  /** The first event (from index `from`) matching `pred`, now or when it arrives. */
  waitFor(pred: (e: SseEvent) => boolean, what = 'the event', from = 0): Promise<SseEvent> {
    const hit = this.events.slice(from).find(pred);
    if (hit) return Promise.resolve(hit);
    if (this.ended) return Promise.reject(new Error(`SSE stream ended before ${what}`));
    return new Promise((resolve, reject) => this.waiters.push({ pred, from, resolve, reject, what }));
  }

  close(): void {
    this.req.destroy();
    this.end();
  }
}
