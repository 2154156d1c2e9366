/**
 * ECA's `chatInline` key (docs/config/chat-inline.md): the model, agent and variant of chats made
 * by `chat/inlinePrompt`. `model` and `variant` apply when such a chat is made (a model the prompt
 * names wins, then these, then the chat it copies, then the default) and stay with it; `agent`
 * applies to every inline prompt that names none. The agent is kept as written: ECA has agents
 * patchbay lacks, and an unknown one means the default agent (core/chat/inline-chat.ts).
 */
import { z } from 'zod';

export const chatInlineConfigSchema = z.object({
  model: z.string().optional(),
  agent: z.string().optional(),
  variant: z.string().optional(),
});
export type ChatInlineConfig = z.infer<typeof chatInlineConfigSchema>;
