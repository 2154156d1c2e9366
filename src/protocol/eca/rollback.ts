/**
 * `chat/rollback` (ECA docs/protocol.md "Chat rollback"): back to before a user message, its
 * messages and/or the file changes of its tool calls. ECA answers `{}`; patchbay adds
 * `notRestored` when some changed file was left as it is (editors ignore fields they do not know,
 * so the same report is also said in the chat).
 */
import { z } from 'zod';

export const chatRollbackParamsSchema = z.object({
  chatId: z.string(),
  /** The content id of the first message removed (a user message's `contentId`). */
  contentId: z.string(),
  /** What to roll back; empty or missing means both, as in ECA (its older clients send none). */
  include: z.array(z.enum(['messages', 'tools'])).optional(),
});
export type ChatRollbackParams = z.infer<typeof chatRollbackParamsSchema>;

export const chatRollbackResultSchema = z.object({
  notRestored: z.array(z.object({ path: z.string(), reason: z.string() })).optional(),
});
export type ChatRollbackResult = z.infer<typeof chatRollbackResultSchema>;
