/**
 * LSP base-protocol writer: each message goes out as ONE write (header and body in one
 * buffer), in call order. vscode-jsonrpc's stream writer issues two writes per message and
 * awaits a lock for each; under a burst of notifications (streamed LLM text) that was a third
 * of the server's CPU (bench/relay.ts).
 */
import type { Writable } from 'node:stream';
import { AbstractMessageWriter, type Message, type MessageWriter } from 'vscode-jsonrpc';

export class FramedWriter extends AbstractMessageWriter implements MessageWriter {
  private errorCount = 0;

  constructor(private readonly output: Writable) {
    super();
    output.on('error', (e: Error) => this.fireError(e));
    output.on('close', () => this.fireClose());
  }

  write(msg: Message): Promise<void> {
    const json = JSON.stringify(msg);
    // One string, one conversion to bytes inside the stream: no intermediate buffers.
    const frame = `Content-Length: ${Buffer.byteLength(json, 'utf8')}\r\n\r\n${json}`;
    return new Promise((resolve, reject) => {
      // Stream writes are ordered; backpressure buffers inside the stream rather than here.
      this.output.write(frame, 'utf8', (err) => {
        if (!err) return resolve();
        this.errorCount++;
        this.fireError(err, msg, this.errorCount);
        reject(err);
      });
    });
  }

  /**
   * A notification as one write, with no promise to settle: the hot path (streamed chat
   * content, tool call states). Same stream, same order as write(); a failed write reaches
   * onError like any other.
   */
  notify(method: string, params: unknown): void {
    const json = JSON.stringify({ jsonrpc: '2.0', method, params });
    this.output.write(`Content-Length: ${Buffer.byteLength(json, 'utf8')}\r\n\r\n${json}`, 'utf8', this.afterNotify);
  }

  private readonly afterNotify = (err: Error | null | undefined): void => {
    if (err) this.fireError(err, undefined, ++this.errorCount);
  };

  end(): void {
    this.output.end();
  }
}
