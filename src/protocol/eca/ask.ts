/** `chat/askQuestion` (server → client; specs/eca-protocol.md, ECA docs/protocol.md "Chat ask question"). */
import { z } from 'zod';

export const askQuestionOptionSchema = z.object({ label: z.string(), description: z.string().optional() });

export const askQuestionParamsSchema = z.object({
  chatId: z.string(),
  question: z.string(),
  options: z.array(askQuestionOptionSchema).optional(),
  /** Lets the client show the question in place of that tool call's block. */
  toolCallId: z.string().optional(),
  allowFreeform: z.boolean(),
});
export type AskQuestionParams = z.infer<typeof askQuestionParamsSchema>;

/** `answer` is null when the user cancelled; either field may be missing from a sloppy client. */
export const askQuestionResultSchema = z.object({
  answer: z.string().nullable().optional(),
  cancelled: z.boolean().optional(),
});
export type AskQuestionResult = z.infer<typeof askQuestionResultSchema>;
