/**
 * The persisted form of a chat step (core/chat/messages.ts derives the LLM history and the editor
 * replay from these). Each row is stored with the format version it was written in; reading
 * upgrades an older row through `storedMessageMigrations`, then validates it, so a change to
 * this schema never makes an existing chat unreadable or misread.
 */
import { z } from 'zod';
import { assistantPartSchema, llmImageSchema } from '../../shapes/llm.js';
import { toolDetailsSchema, toolOutputSchema } from '../../shapes/tool.js';
import { rejectReasonSchema } from '../events.js';

export const storedMessageSchema = z.discriminatedUnion('role', [
  z.object({
    role: z.literal('user'),
    text: z.string(),
    contentId: z.string().optional(),
    /** Rendered contexts sent to the LLM with the text. */
    contextText: z.string().optional(),
    /**
     * Images attached to the message (image contexts, image files), sent with it to models that
     * read images. Optional, so rows written before images existed read as they were.
     */
    images: z.array(llmImageSchema).optional(),
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
    details: toolDetailsSchema.optional(),
    /** The one-line summary the editor showed (a replay shows it again); rows stored before it have none. */
    summary: z.string().optional(),
    reason: rejectReasonSchema.optional(),
    totalTimeMs: z.number(),
  }),
  z.object({
    role: z.literal('system'),
    kind: z.enum(['interrupted', 'summary', 'notice']),
    text: z.string(),
    /**
     * A summary only: how many of the messages just before it stay verbatim after it (the most
     * recent turn, kept out of the summary); the model reads the summary, then those, then what follows.
     */
    kept: z.number().int().min(0).optional(),
    /** A summary only: written by auto-compaction, not by `/compact`. */
    auto: z.boolean().optional(),
  }),
  /**
   * A named bookmark the user put after a message (ECA `chat/addFlag`): shown in the chat, never
   * sent to the LLM. A new variant, not a new format: rows already stored read as before.
   */
  z.object({ role: z.literal('flag'), text: z.string(), contentId: z.string() }),
]);
export type StoredMessage = z.infer<typeof storedMessageSchema>;

/** The format version rows are written in. Raise it together with a new migration. */
export const STORED_MESSAGE_VERSION = 2;

/**
 * `storedMessageMigrations[v]` turns the JSON of a version-`v` row into version `v + 1`. A change
 * to the schema bumps STORED_MESSAGE_VERSION and adds one function here.
 */
export type StoredMessageMigration = (data: unknown) => unknown;

/** Format 1 stored a rejected call's reason under ECA's names; format 2 under core's own. */
const V1_REASONS: Readonly<Record<string, string>> = { user: 'user', userChoiceDeny: 'user', userConfigDeny: 'denied', userPromptStop: 'stopped' };

export const storedMessageMigrations: Readonly<Record<number, StoredMessageMigration>> = {
  1: (data) => {
    if (!data || typeof data !== 'object' || !('reason' in data) || typeof data.reason !== 'string') return data;
    return { ...data, reason: V1_REASONS[data.reason] ?? data.reason };
  },
};

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
