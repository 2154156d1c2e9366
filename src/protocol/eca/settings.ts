/**
 * What the plugins' settings panels ask for: `providers/list` and the background-jobs methods
 * (ECA docs/protocol.md "Provider Management", "Background Jobs"). eca-emacs opens both as tabs of
 * `eca-settings` (eca-providers.el, eca-jobs.el) and shows "Failed to load providers" on an error.
 */
import { z } from 'zod';

export const providersListParamsSchema = z.unknown();

const providerAuthSchema = z.object({
  status: z.enum(['authenticated', 'expiring', 'expired', 'unauthenticated', 'local', 'not-running']),
  type: z.enum(['oauth', 'api-key']).optional(),
  source: z.enum(['config', 'login', 'env']).optional(),
  envVar: z.string().optional(),
  /** Epoch seconds. */
  expiresAt: z.number().optional(),
  /** The login method used. */
  mode: z.string().optional(),
});

const loginMethodSchema = z.object({ key: z.string(), label: z.string() });
const inputFieldSchema = z.object({ key: z.string(), label: z.string(), type: z.enum(['secret', 'text']) });

const providerModelSchema = z.object({
  /** The model's name without the provider prefix. */
  id: z.string(),
  capabilities: z.object({ reason: z.boolean(), vision: z.boolean(), tools: z.boolean(), webSearch: z.boolean() }),
  cost: z.object({ input: z.number(), output: z.number() }).optional(),
});

export const providerStatusSchema = z.object({
  id: z.string(),
  label: z.string().optional(),
  configured: z.boolean(),
  auth: providerAuthSchema,
  login: z.object({ methods: z.array(loginMethodSchema) }).optional(),
  models: z.array(providerModelSchema),
  /** The provider's config without its key (ECA's `config-settings`). */
  settings: z.record(z.string(), z.unknown()).optional(),
});
export type ProviderStatus = z.infer<typeof providerStatusSchema>;

export const providersListResultSchema = z.object({ providers: z.array(providerStatusSchema) });

/** ECA docs/protocol.md "Login Provider": without `method`, the methods to choose from. */
export const providersLoginParamsSchema = z.object({ provider: z.string().min(1), method: z.string().min(1).optional() });
export const providersLoginResultSchema = z.discriminatedUnion('action', [
  z.object({ action: z.literal('choose-method'), methods: z.array(loginMethodSchema) }),
  /** Without `fields` the server takes the redirect itself; completion comes as `providers/updated`. */
  z.object({ action: z.literal('authorize'), url: z.string(), message: z.string(), fields: z.array(inputFieldSchema).optional() }),
  z.object({ action: z.literal('device-code'), url: z.string(), code: z.string(), message: z.string() }),
  z.object({ action: z.literal('input'), fields: z.array(inputFieldSchema) }),
  z.object({ action: z.literal('done') }),
]);
export type ProvidersLoginResult = z.infer<typeof providersLoginResultSchema>;
/** "Login Provider Input": the fields' values by key (`api-key`, `code`). */
export const providersLoginInputParamsSchema = z.object({
  provider: z.string().min(1),
  data: z.record(z.string(), z.string({ error: 'each field value must be a string' })),
});
export const providersLoginInputResultSchema = z.object({ action: z.literal('done') });
export const providersLogoutParamsSchema = z.object({ provider: z.string().min(1) });
export const providersLogoutResultSchema = z.object({});

export const jobsListParamsSchema = z.unknown();
/** patchbay runs no background jobs (its shell tool stops what a command leaves running), so the list is always empty. */
export const jobsListResultSchema = z.object({ jobs: z.array(z.never()) });
export const jobParamsSchema = z.object({ jobId: z.string() });
export const jobsKillResultSchema = z.object({ killed: z.boolean() });
/** ECA's answer for a job it does not know: no lines, no status, no exit code. */
export const jobsReadOutputResultSchema = z.object({
  lines: z.array(z.object({ text: z.string(), stream: z.enum(['stdout', 'stderr']) })),
  status: z.enum(['running', 'completed', 'failed', 'killed']).nullable(),
  exitCode: z.number().int().nullable(),
});
