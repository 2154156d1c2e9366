/**
 * `chat/inlinePrompt` (ECA 0.157, docs/protocol.md "Chat Inline Prompt"; docs/config/chat-inline.md):
 * a prompt whose answer an editor draws inline (eca-emacs `eca-chat-inline.el`, eca-intellij
 * `inline_chat.clj`, eca-vscode), backed by a regular chat whose id the client mints. The params
 * are `chat/prompt`'s plus `sourceChatId`, the chat a new inline chat copies its history from.
 * The answer is `chat/prompt`'s. Bad values (no or a reserved id, a blank message) are answered
 * `{model: "error", status: "error"}`, not as a JSON-RPC error: eca-emacs reads that status from
 * a successful response (`eca-chat-inline--send`), so `chatId` is optional here and checked by
 * the handler (src/server/eca/eca-inline.ts).
 */
import { z } from 'zod';
import { chatPromptParamsSchema } from './chat.js';

export const chatInlinePromptParamsSchema = chatPromptParamsSchema.omit({ chatId: true, behavior: true, requestId: true }).extend({
  /** Minted by the client; follow-ups reuse it. */
  chatId: z.string().optional(),
  /** The chat a new inline chat copies its history from (ignored when `chatId` exists). */
  sourceChatId: z.string().optional(),
});
export type ChatInlinePromptParams = z.infer<typeof chatInlinePromptParamsSchema>;
