/** What the LLM layer reads of the config: providers and their models (ECA's `providers`). */
import { z } from 'zod';

/** A payload merged into the model's requests: a JSON object of wire fields. */
const payloadSchema = z.record(z.string(), z.unknown(), { error: 'expected an object of request fields, e.g. {"reasoning_effort": "high"}' });

export const modelSchema = z.object({
  modelName: z.string().optional(),
  limit: z.object({ context: z.number().int().positive(), output: z.number().int().positive() }).optional(),
  /** USD per million tokens. */
  cost: z
    .object({
      input: z.number().nonnegative(),
      output: z.number().nonnegative(),
      cacheRead: z.number().nonnegative().optional(),
      cacheWrite: z.number().nonnegative().optional(),
    })
    .optional(),
  /** The model accepts images (ECA's `imageInput`); unset: what patchbay knows of the model, else no. */
  imageInput: z.boolean().optional(),
  /** Local models (`api: "local"`): `hf:<user>/<repo>/<file.gguf>`, an https URL, or a file path. */
  model: z.string().min(1).optional(),
  contextSize: z.number().int().positive().optional(),
  gpuLayers: z.union([z.number().int().nonnegative(), z.enum(['auto', 'max'])]).optional(),
  /** Expected sha256 of a downloaded model file. */
  sha256: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'a sha256 is 64 hex characters')
    .optional(),
  /**
   * Named payload presets (ECA's variants: eca docs/config/variants.md), picked per chat in the
   * editor; over the built-in ones of known reasoning models by name, `{}` removes one.
   */
  variants: z.record(z.string().min(1), payloadSchema).optional(),
  /** Fields added to every request of this model (ECA's `extraPayload`); a variant's win over them. */
  extraPayload: payloadSchema.optional(),
  /**
   * The model is trained for fill-in-the-middle (Codestral, Qwen2.5-Coder, DeepSeek-Coder…): inline
   * completion sends prefix and suffix to the API's FIM endpoint (`openai-chat`: `/completions`,
   * `ollama`: `/api/generate`) instead of a chat prompt. A patchbay key: ECA always uses the chat API.
   */
  fim: z.boolean().optional(),
});

export const providerSchema = z.object({
  api: z.enum(['openai-chat', 'openai-responses', 'anthropic', 'ollama', 'local']).optional(),
  url: z.string().optional(),
  key: z.string().optional(),
  /** Name of an env var holding the key (ECA's `keyEnv`). */
  keyEnv: z.string().optional(),
  models: z.record(z.string(), modelSchema).optional(),
});

export type ProviderConfig = z.infer<typeof providerSchema>;
