/**
 * A JSON-RPC connection over any byte stream pair: our FramedReader for input (so protocol
 * faults get answered), our FramedWriter (one ordered write per message) and vscode-jsonrpc's engine (ids,
 * cancellation via `$/cancelRequest`, −32601 for unknown methods).
 */
import type { Readable, Writable } from 'node:stream';
import { createMessageConnection, type MessageConnection, type Logger as RpcLogger } from 'vscode-jsonrpc';
import { FramedReader } from './framing.js';
import { FramedWriter } from './writer.js';
import { MAX_JSON_DEPTH } from '../util/json-depth.js';
import { logger } from '../util/log.js';

const log = logger('rpc');

export interface Connection {
  rpc: MessageConnection;
  /** Sends a notification without vscode-jsonrpc's promise chain (FramedWriter.notify). */
  notify(method: string, params: unknown): void;
}

export function createConnection(input: Readable, output: Writable): Connection {
  const writer = new FramedWriter(output);
  const reader = new FramedReader(
    input,
    (fault) => {
      log.warn(`${fault.message} (answered ${fault.code})`);
      void writer.write({ jsonrpc: '2.0', id: fault.id, error: { code: fault.code, message: fault.message } } as never);
    },
    { maxDepth: MAX_JSON_DEPTH, onDropped: (why) => log.warn(why) },
  );
  const rpcLog: RpcLogger = {
    error: (m) => log.error(m),
    warn: (m) => log.warn(m),
    info: (m) => log.debug(m),
    log: (m) => log.debug(m),
  };
  return { rpc: createMessageConnection(reader, writer, rpcLog), notify: (method, params) => writer.notify(method, params) };
}
