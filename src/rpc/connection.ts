/**
 * A JSON-RPC connection over any byte stream pair: our FramedReader for input (so protocol
 * faults get answered), vscode-jsonrpc's writer (serialized writes) and its engine (ids,
 * cancellation via `$/cancelRequest`, −32601 for unknown methods).
 */
import type { Readable, Writable } from 'node:stream';
import { createMessageConnection, type MessageConnection, type Logger as RpcLogger } from 'vscode-jsonrpc';
import { StreamMessageWriter } from 'vscode-jsonrpc/node.js';
import { FramedReader } from './framing.js';
import { logger } from '../util/log.js';

const log = logger('rpc');

export function createConnection(input: Readable, output: Writable): MessageConnection {
  const writer = new StreamMessageWriter(output, 'utf-8');
  const reader = new FramedReader(input, (fault) => {
    log.warn(`${fault.message} (answered ${fault.code})`);
    void writer.write({ jsonrpc: '2.0', id: fault.id, error: { code: fault.code, message: fault.message } } as never);
  });
  const rpcLog: RpcLogger = {
    error: (m) => log.error(m),
    warn: (m) => log.warn(m),
    info: (m) => log.debug(m),
    log: (m) => log.debug(m),
  };
  return createMessageConnection(reader, writer, rpcLog);
}
