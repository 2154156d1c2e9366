/**
 * The listening side: an HTTP server whose upgrades are checked (http-guard.ts) before ws ever
 * sees them, so refused clients get a plain HTTP status and no WebSocket.
 */
import { createServer, STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { TOOL_RESULT_MAX } from '../../protocol/gateway/index.js';
import { checkUpgrade } from './http-guard.js';

export interface Listener {
  readonly server: Server;
  readonly wss: WebSocketServer;
  readonly port: number;
  /** Stops accepting; resolves once the HTTP server has closed. */
  close(): Promise<void>;
}

export interface ListenOptions {
  host: string;
  port: number;
  maxConnections: number;
  /** Open connections now (for the cap). */
  connections: () => number;
  /** While stopping, new upgrades are refused. */
  accepting: () => boolean;
  onConnection: (ws: WebSocket) => void;
  onRefused: (status: number, reason: string) => void;
}

function refuse(socket: Duplex, status: number, reason: string): void {
  const body = `${reason}\n`;
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

export function listen(o: ListenOptions): Promise<Listener> {
  // maxPayload: ws drops a bigger frame itself (close 1009) before it is ever buffered in full.
  // allowSynchronousEvents off: ws hands over one message per socket per event-loop turn, so a
  // chunk of hundreds of frames never runs as one block and the editor's stdin is read in between.
  const wss = new WebSocketServer({ noServer: true, maxPayload: TOOL_RESULT_MAX, perMessageDeflate: false, allowSynchronousEvents: false });
  const server = createServer((_req, res) => {
    res.writeHead(426, { 'Content-Type': 'text/plain', Upgrade: 'websocket' }).end('patchbay provider gateway: WebSocket only\n');
  });
  let port = 0;
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const verdict = o.accepting() ? checkUpgrade(req, port, o.connections(), o.maxConnections) : ({ ok: false, status: 503, reason: 'gateway is stopping' } as const);
    if (!verdict.ok) {
      o.onRefused(verdict.status, verdict.reason);
      return refuse(socket, verdict.status, verdict.reason);
    }
    wss.handleUpgrade(req, socket, head, (ws) => o.onConnection(ws));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      const addr = server.address();
      port = typeof addr === 'object' && addr ? addr.port : o.port;
      resolve({
        server,
        wss,
        port,
        close: () =>
          new Promise<void>((done) => {
            wss.close();
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
