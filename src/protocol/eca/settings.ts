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

const jobStatusSchema = z.enum(['running', 'completed', 'failed', 'killed']);

/** ECA docs/protocol.md "List Jobs" `JobSummary` (and `background_tasks.clj` `jobs-summary`, which adds `toolCallId`). */
export const jobSummarySchema = z.object({
  id: z.string(),
  type: z.string(),
  status: jobStatusSchema,
  /** The command line. */
  label: z.string(),
  summary: z.string().nullable(),
  startedAt: z.string(),
  /** `5m23s`. */
  elapsed: z.string(),
  exitCode: z.number().int().nullable(),
  chatId: z.string(),
  /** The chat's title, else its id. */
  chatLabel: z.string(),
  toolCallId: z.string().optional(),
});
export type JobSummary = z.infer<typeof jobSummarySchema>;

/** `jobs/list` result and `jobs/updated` params: every job not yet evicted. */
export const jobsListResultSchema = z.object({ jobs: z.array(jobSummarySchema) });
/**
 * eca-emacs sends `(list :job-id id)`, which its JSON encoder writes as `"job-id"` (eca-jobs.el
 * `eca-jobs--kill-at-point`, `eca-jobs--view-output-by-id`); ECA's server reads both spellings
 * (its JSON-RPC layer turns keys into kebab-case keywords). So does patchbay.
 */
export const jobParamsSchema = z.preprocess(
  (raw) => (raw && typeof raw === 'object' && !('jobId' in raw) && 'job-id' in raw ? { ...raw, jobId: (raw as Record<string, unknown>)['job-id'] } : raw),
  z.object({ jobId: z.string() }),
);
/** false for a job unknown or not running (ECA `kill-job!`). */
export const jobsKillResultSchema = z.object({ killed: z.boolean() });
/** A snapshot of the kept lines; for a job it does not know, ECA answers no lines, no status, no exit code. */
export const jobsReadOutputResultSchema = z.object({
  lines: z.array(z.object({ text: z.string(), stream: z.enum(['stdout', 'stderr']) })),
  status: jobStatusSchema.nullable(),
  exitCode: z.number().int().nullable(),
});
