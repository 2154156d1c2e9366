/**
 * Inline completion and rewrite (ECA docs/protocol.md "Completion", "Rewrite", "Rewrite Content
 * Received"). Positions are ECA's: 1-based lines; `completion/inline` characters are 1-based too
 * (eca-emacs eca-completion.el sends `(1+ column)`, ECA's completion.clj takes one off), rewrite
 * ranges are only shown to the model as the editor sent them.
 */
import { z } from 'zod';

const positionSchema = z.object({ line: z.number().int().nonnegative(), character: z.number().int().nonnegative() });
const rangeSchema = z.object({ start: positionSchema, end: positionSchema });
export type EcaRange = z.infer<typeof rangeSchema>;

/** eca-emacs sends `doc-text` and `doc-version` (eca-completion.el): server.ts reads kebab-case keys as these. */
export const completionInlineParamsSchema = z.object({
  docText: z.string(),
  /** The editor's version of the document, echoed in each item so a stale answer can be dropped. */
  docVersion: z.number().int(),
  position: positionSchema,
  /** eca-emacs sends the file's path; not in ECA's docs. */
  path: z.string().optional(),
});
export type CompletionInlineParams = z.infer<typeof completionInlineParamsSchema>;

export const completionInlineResultSchema = z.object({
  items: z.array(z.object({ text: z.string(), docVersion: z.number().int(), range: rangeSchema })),
});
export type CompletionInlineResult = z.infer<typeof completionInlineResultSchema>;

export const rewritePromptParamsSchema = z.object({
  id: z.string().min(1),
  text: z.string(),
  prompt: z.string(),
  path: z.string().optional(),
  range: rangeSchema,
});
export type RewritePromptParams = z.infer<typeof rewritePromptParamsSchema>;

export const rewritePromptResultSchema = z.object({ status: z.literal('prompting'), model: z.string() });

export const rewriteContentSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('started') }),
  z.object({ type: z.literal('reasoning') }),
  z.object({ type: z.literal('text'), text: z.string() }),
  /** The whole answer without the Markdown fences the model put around it; before `finished`. */
  z.object({ type: z.literal('replace'), text: z.string() }),
  z.object({ type: z.literal('error'), message: z.string() }),
  z.object({ type: z.literal('finished'), totalTimeMs: z.number() }),
]);

export const rewriteContentReceivedSchema = z.object({ rewriteId: z.string(), content: rewriteContentSchema });
export type RewriteContentReceived = z.infer<typeof rewriteContentReceivedSchema>;
