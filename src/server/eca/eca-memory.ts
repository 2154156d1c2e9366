/**
 * ECA's durable-memory methods over the runtime's memory (runtime/memory.ts): `memory/list`,
 * an error while memory is off (ECA docs/protocol.md "Durable Memory": `memory is disabled`).
 */
import { ResponseError } from 'vscode-jsonrpc';
import type { z } from 'zod';
import { RequestFailed } from '../../rpc/errors.js';
import { MEMORY_DISABLED_CODE, type memoryListResultSchema } from '../../protocol/eca/memory.js';
import { MemoryDisabledError } from '../../runtime/memory.js';
import type { Workspace } from '../../runtime/workspace.js';

export function listMemories(ws: Workspace): z.input<typeof memoryListResultSchema> {
  try {
    const { memories, skipped } = ws.memory.list();
    return { memories: memories.map(({ path, tier, name, description, type, tags, label, mtimeMs }) => ({ path, tier, name, description, type, tags, label, mtimeMs })), skipped };
  } catch (e) {
    // JSON-RPC codes are integers: ECA's string code travels in `data`, the message is its own.
    if (e instanceof MemoryDisabledError) throw new ResponseError(RequestFailed, e.message, { code: MEMORY_DISABLED_CODE });
    throw e;
  }
}
