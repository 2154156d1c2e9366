/**
 * `chat/history` and `chat/fork` (ECA docs/protocol.md "Chat history", "Chat fork"). History
 * answers its two failures in the result (`error`), not as JSON-RPC errors: eca-emacs
 * (`eca-chat-load-older-history`) reads `:error :code` from a successful response. A fork
 * answers the new chat's id (ECA 0.157; absent in ECA when the content id was not found, which
 * patchbay answers as an error instead).
 */
import { z } from 'zod';
import { contentReceivedSchema } from './content.js';

export const chatHistoryParamsSchema = z.object({
  chatId: z.string(),
  /** Max messages in the page; ECA ignores a limit that is not positive. */
  limit: z.number().int().optional(),
  /** An opaque cursor, or "lastCompaction": the page older than it. */
  before: z.string().optional(),
  /** An opaque cursor, or "lastCompaction": the page newer than it. */
  after: z.string().optional(),
});

export const chatHistoryMetaSchema = z.object({
  total: z.number().int(),
  returned: z.number().int(),
  beforeCursor: z.string().nullable(),
  afterCursor: z.string().nullable(),
  compactionCursor: z.string().nullable(),
});
export type ChatHistoryMeta = z.infer<typeof chatHistoryMetaSchema>;

export const chatHistoryResultSchema = z.object({
  contents: z.array(contentReceivedSchema).optional(),
  meta: chatHistoryMetaSchema.optional(),
  error: z.object({ code: z.enum(['chat_not_found', 'cursor_expired']), message: z.string() }).optional(),
});
export type ChatHistoryResult = z.infer<typeof chatHistoryResultSchema>;

export const chatForkParamsSchema = z.object({
  chatId: z.string(),
  /**
   * The content id of the last message the fork keeps. patchbay extension: absent, the fork keeps
   * the whole chat (`/fork` of `patchbay chat`; a chat's last answer has no content id to name).
   */
  contentId: z.string().optional(),
});

export const chatForkResultSchema = z.object({ chatId: z.string().optional() });
