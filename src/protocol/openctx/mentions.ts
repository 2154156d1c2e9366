/** `mentions` (specs/openctx-protocol-0.1.md "Mentions"). */
import { z } from 'zod';

export const mentionSchema = z.looseObject({
  title: z.string(),
  description: z.string().optional(),
  uri: z.string(),
  data: z.record(z.string(), z.unknown()).optional(),
});
export type Mention = z.infer<typeof mentionSchema>;

export const mentionsParamsSchema = z.looseObject({
  query: z.string().optional(),
  uri: z.string().optional(),
  codebase: z.string().optional(),
  autoInclude: z.boolean().optional(),
});
export type MentionsParams = z.infer<typeof mentionsParamsSchema>;

export type MentionsResult = Mention[];
