/**
 * Server-sent events on one HTTP response (ECA src/eca/remote/sse.clj): `event:` names an ECA
 * event (`chat:content-received`, …), `data:` its JSON on one line, `id:` where a client may resume
 * from (`Last-Event-ID`). A comment line every 15 s keeps proxies from closing an idle stream.
 *
 * A client that stops reading is disconnected once `maxBuffered` bytes wait for it, instead of
 * events being dropped: it reconnects with its last id and misses nothing.
 */
import type { ServerResponse } from 'node:http';

const HEARTBEAT_MS = 15_000;
const MAX_BUFFERED = 8 * 1024 * 1024;

export class SseStream {
  private closed = false;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly onCloseFns: Array<() => void> = [];

  constructor(
    private readonly res: ServerResponse,
    headers: Record<string, string> = {},
    private readonly maxBuffered = MAX_BUFFERED,
  ) {
    res.writeHead(200, { ...headers, 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
    res.flushHeaders();
    this.heartbeat = setInterval(() => this.write(':\n\n'), HEARTBEAT_MS);
    this.heartbeat.unref();
    res.on('close', () => this.close());
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** One event; `id` must be one line (ids the caller builds: no CR or LF). */
  send(event: string, data: unknown, id?: string): void {
    if (/[\r\n]/.test(event) || (id !== undefined && /[\r\n]/.test(id))) throw new Error('an SSE event name or id holds a line break');
    // JSON.stringify escapes line breaks inside strings: the data is one line.
    this.write(`${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data) ?? 'null'}\n\n`);
  }

  onClose(fn: () => void): void {
    if (this.closed) fn();
    else this.onCloseFns.push(fn);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    this.res.end();
    for (const fn of this.onCloseFns.splice(0)) fn();
  }

  private write(text: string): void {
    if (this.closed) return;
    if (this.res.writableLength > this.maxBuffered) {
      // Too slow to keep up: it reconnects with Last-Event-ID and is replayed from there.
      this.close();
      this.res.destroy();
      return;
    }
    this.res.write(text);
  }
}
