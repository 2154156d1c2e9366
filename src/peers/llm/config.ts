/** What the LLM layer reads of the config: providers and their models (ECA's `providers`). */
import { z } from 'zod';
import { isSafeLoginUrl, SAFE_LOGIN_URL_RULE } from '../../util/oauth.js';

/** A login endpoint: it reaches the editor's browser or receives tokens, so only https (or this machine). */
const loginUrl = z.url().refine(isSafeLoginUrl, { error: `a login URL ${SAFE_LOGIN_URL_RULE}` });
/** The longest a browser or device login may wait for the user (an hour; setTimeout overflows past ~24 days). */
export const MAX_LOGIN_TIMEOUT_S = 3600;

/** A payload merged into the model's requests: a JSON object of wire fields. */
const payloadSchema = z.record(z.string(), z.unknown(), { error: 'expected an object of request fields, e.g. {"reasoning_effort": "high"}' });

/**
 * ECA's `cacheRetention` (docs/config/models.md): `short` (5-minute cache, the default) or `long`
 * (1 hour, Anthropic's API only); patchbay adds `none` to send no cache breakpoints or keys.
 */
const cacheRetentionSchema = z.enum(['none', 'short', 'long']);

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
  /** Prompt caching for this model, over the provider's `cacheRetention`. */
  cacheRetention: cacheRetentionSchema.optional(),
});

/**
 * How a user logs in to a provider from the editor (`providers/login`), beyond pasting a key:
 * an OAuth 2.0 public client (no secret) with the authorization server's endpoints. Which
 * methods are offered follows from what is set: `authorizationUrl` + `tokenUrl` → `browser`
 * (loopback redirect), with `redirectUri` also → `paste` (the server shows the code, the user
 * pastes it), `deviceAuthorizationUrl` + `tokenUrl` → `device` (RFC 8628).
 */
const loginSchema = z.object({
  clientId: z.string().min(1),
  authorizationUrl: loginUrl.optional(),
  tokenUrl: loginUrl.optional(),
  deviceAuthorizationUrl: loginUrl.optional(),
  /** A redirect page that shows the code to paste (the `paste` method). */
  redirectUri: loginUrl.optional(),
  scopes: z.array(z.string()).optional(),
  /** Extra query parameters for the authorization request. */
  authorizationParams: z.record(z.string(), z.string()).optional(),
  /** How long a browser or device login may wait for the user (default 300, at most 3600). */
  timeoutSeconds: z.number().positive().max(MAX_LOGIN_TIMEOUT_S).optional(),
});
export type ProviderLoginConfig = z.infer<typeof loginSchema>;

export const providerSchema = z.object({
  api: z.enum(['openai-chat', 'openai-responses', 'anthropic', 'ollama', 'local']).optional(),
  url: z.string().optional(),
  key: z.string().optional(),
  /** Name of an env var holding the key (ECA's `keyEnv`). */
  keyEnv: z.string().optional(),
  models: z.record(z.string(), modelSchema).optional(),
  login: loginSchema.optional(),
  /** Prompt caching for the provider's models (ECA's `cacheRetention`). */
  cacheRetention: cacheRetentionSchema.optional(),
});

export type ProviderConfig = z.infer<typeof providerSchema>;
