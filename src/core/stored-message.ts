/**
 * The persisted form of a chat step (core/messages.ts derives the LLM history and the editor
 * replay from these). Each row is stored with the format version it was written in; reading
 * upgrades an older row through `storedMessageMigrations`, then validates it, so a change to
 * this schema never makes an existing chat unreadable or misread.
 */
import { z } from 'zod';
import { assistantPartSchema } from '../shapes/llm.js';
import { fileChangeDetailsSchema, toolOutputSchema } from '../shapes/tool.js';

/** Why a tool call did not run: the same values ECA's `toolCallRejected.reason` carries. */
export const storedRejectReasonSchema = z.enum(['user', 'userChoiceDeny', 'userConfigDeny', 'userPromptStop']);

export const storedMessageSchema = z.discriminatedUnion('role', [
  z.object({
    role: z.literal('user'),
    text: z.string(),
    contentId: z.string().optional(),
    /** Rendered contexts sent to the LLM with the text. */
    contextText: z.string().optional(),
  }),
  z.object({ role: z.literal('assistant'), parts: z.array(assistantPartSchema), interrupted: z.boolean().optional() }),
  z.object({
    role: z.literal('tool'),
    toolCallId: z.string(),
    name: z.string(),
    server: z.string(),
    origin: z.string(),
    args: z.record(z.string(), z.unknown()),
    outcome: z.enum(['called', 'rejected']),
    error: z.boolean(),
    outputs: z.array(toolOutputSchema),
    /** What the LLM reads as the result. */
    llmText: z.string(),
    details: fileChangeDetailsSchema.optional(),
    reason: storedRejectReasonSchema.optional(),
    totalTimeMs: z.number(),
  }),
  z.object({ role: z.literal('system'), kind: z.enum(['interrupted', 'summary', 'notice']), text: z.string() }),
]);
export type StoredMessage = z.infer<typeof storedMessageSchema>;

/** The format version rows are written in. Raise it together with a new migration. */
export const STORED_MESSAGE_VERSION = 1;

/**
 * `storedMessageMigrations[v]` turns the JSON of a version-`v` row into version `v + 1`. Version 1
 * is the current shape, so the list is empty today; a change to the schema bumps
 * STORED_MESSAGE_VERSION and adds one function here.
 */
export type StoredMessageMigration = (data: unknown) => unknown;
export const storedMessageMigrations: Readonly<Record<number, StoredMessageMigration>> = {};

export type DecodedMessage = { ok: true; message: StoredMessage } | { ok: false; reason: string };

/**
 * A stored row's JSON, written in format `version`, as a current StoredMessage: upgraded step by
 * step, then validated. A row from a newer patchbay is refused, not guessed at. The reasons never
 * quote the row's content (it may hold secrets).
 */
export function decodeStoredMessage(
  json: string,
  version: number,
  migrations: Readonly<Record<number, StoredMessageMigration>> = storedMessageMigrations,
  current: number = STORED_MESSAGE_VERSION,
): DecodedMessage {
  if (!Number.isInteger(version) || version < 1) return { ok: false, reason: `it has an invalid format version (${String(version)})` };
  if (version > current) {
    return { ok: false, reason: `it was written by a newer patchbay (format version ${version}; this one reads up to ${current})` };
  }
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch {
    return { ok: false, reason: 'it is not valid JSON' };
  }
  for (let v = version; v < current; v++) {
    const step = migrations[v];
    if (!step) return { ok: false, reason: `there is no upgrade from format version ${v}` };
    try {
      data = step(data);
    } catch (e) {
      return { ok: false, reason: `upgrading it from format version ${v} failed: ${e instanceof Error ? e.message : String(e)}` };
    }
  }
  const parsed = storedMessageSchema.safeParse(data);
  if (!parsed.success) {
    const why = parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') : 'message'}: ${i.message}`).join('; ');
    return { ok: false, reason: `it does not have the expected shape (${why})` };
  }
  return { ok: true, message: parsed.data };
}
