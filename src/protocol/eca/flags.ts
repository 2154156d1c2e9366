/**
 * `chat/addFlag` and `chat/removeFlag` (ECA docs/protocol.md "Chat add flag", "Chat remove flag").
 * Both answer `{}`; the flag itself reaches the client as a `flag` content (./content.ts).
 */
import { z } from 'zod';

export const chatAddFlagParamsSchema = z.object({
  chatId: z.string(),
  /** The message after which the flag goes: a user message's `contentId` or a content's `id` (tool call, reasoning, flag). */
  contentId: z.string(),
  /** The flag's display text. */
  text: z.string(),
});

export const chatRemoveFlagParamsSchema = z.object({
  chatId: z.string(),
  /** The `contentId` of the flag content to remove. */
  contentId: z.string(),
});
