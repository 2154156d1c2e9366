/**
 * The settings of the editor's two one-shot LLM features, under ECA's keys (eca docs/config/completion.md,
 * docs/config/rewrite.md): `completion` for inline completion (`completion/inline`) and `rewrite`
 * for rewriting a selection (`rewrite/prompt`). Unset models fall back to the default model.
 */
import { z } from 'zod';

const modelId = z.string().regex(/^[^/]+\/.+$/, 'a model is "<provider>/<model>", e.g. "openai/gpt-4.1"');

export const completionConfigSchema = z.object({
  /** `"<provider>/<model>"`; unset: the default model. */
  model: modelId.optional(),
  /** Replaces the built-in instructions of the chat-style completion (ECA's legacy `completion.systemPrompt`). */
  systemPrompt: z.string().min(1).optional(),
});

export const rewriteConfigSchema = z.object({
  /** `"<provider>/<model>"`; unset: the default model. */
  model: modelId.optional(),
  /** Replaces the built-in rewrite instructions (ECA's legacy `rewrite.systemPrompt`). */
  systemPrompt: z.string().min(1).optional(),
  /** A file longer than this is given to the model as this many lines around the selection (ECA's default 2000). */
  fullFileMaxLines: z.number().int().positive().default(2000),
});

export type CompletionConfig = z.infer<typeof completionConfigSchema>;
export type RewriteConfig = z.infer<typeof rewriteConfigSchema>;
