/**
 * The checkpoint a file tool records for one path it changed (shapes/tool.ts FileCheckpoint), as
 * ECA's file tools keep `:rollback-changes` (eca `src/eca/features/tools/filesystem.clj`): the
 * content before, or none when the path was created. Unlike ECA, the content after is kept as a
 * hash, so a rollback can tell whether the user changed the file by hand since.
 */
import { createHash } from 'node:crypto';
import type { FileCheckpoint } from '../../shapes/tool.js';

/** Files larger than this are not checkpointed: a rollback reports them instead of restoring them. */
export const MAX_CHECKPOINT_BYTES = 10 * 1024 * 1024;

export function contentHash(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** `before`/`after`: the path's bytes before and after the change, null when it did not exist. */
export function checkpointOf(path: string, before: Buffer | null, after: Buffer | null): FileCheckpoint {
  const afterHash = after === null ? null : contentHash(after);
  if (before !== null && before.length > MAX_CHECKPOINT_BYTES) return { path, before: null, afterHash, skipped: `it was larger than ${MAX_CHECKPOINT_BYTES / 1024 / 1024} MB when changed` };
  return { path, before, afterHash };
}

/**
 * A move's two checkpoints: the source existed with `bytes` and is gone, the destination did not
 * exist and now holds them. `bytes` is a reason instead when the content was not kept (a
 * directory, a file past the limit): both paths are then reported at rollback.
 */
export function moveCheckpoints(from: string, to: string, bytes: Buffer | { skipped: string }): FileCheckpoint[] {
  if (!Buffer.isBuffer(bytes)) {
    return [
      { path: from, before: null, afterHash: null, skipped: bytes.skipped },
      { path: to, before: null, afterHash: null, skipped: bytes.skipped },
    ];
  }
  return [checkpointOf(from, bytes, null), checkpointOf(to, null, bytes)];
}
