/**
 * `chat/addFlag` and `chat/removeFlag` (ECA docs/protocol.md "Chat add flag", "Chat remove flag").
 * Both answer `{}`; the flag itself reaches the client as a `flag` content (./content.ts).
 */
import { z } from 'zod';

export const chatAddFlagParamsSchema = z.object({
  chatId: z.string(),
  /** The message after which the flag goes: a user message's `contentId` or a content's `id` (tool call, reasoning, flag). */
  contentId: z.string(),
  /**
   * The flag's display text. ECA's server takes a flag without one (eca-desktop's flag button
   * sends none; chat.clj `add-flag` stores it as is): here it is an empty text.
   */
  text: z.string().default(''),
});

export const chatRemoveFlagParamsSchema = z.object({
  chatId: z.string(),
  /** The `contentId` of the flag content to remove. */
  contentId: z.string(),
});
