/**
 * patchbay's config, ECA-compatible where ECA has the key. One zod schema is the
 * source of truth; the `Config` type is derived from it.
 */
import { z } from 'zod';
import { gatewayConfigSchema } from '../peers/gateway/config.js';
import { agentSchema } from '../shapes/agent.js';
import { openCtxConfigSchema } from '../peers/openctx/client/config.js';

const modelSchema = z.object({
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
  /** Local models (`api: "local"`): `hf:<user>/<repo>/<file.gguf>`, an https URL, or a file path. */
  model: z.string().min(1).optional(),
  contextSize: z.number().int().positive().optional(),
  gpuLayers: z.union([z.number().int().nonnegative(), z.enum(['auto', 'max'])]).optional(),
  /** Expected sha256 of a downloaded model file. */
  sha256: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'a sha256 is 64 hex characters')
    .optional(),
});

export const providerSchema = z.object({
  api: z.enum(['openai-chat', 'openai-responses', 'anthropic', 'ollama', 'local']).optional(),
  url: z.string().optional(),
  key: z.string().optional(),
  /** Name of an env var holding the key (ECA's `keyEnv`). */
  keyEnv: z.string().optional(),
  models: z.record(z.string(), modelSchema).optional(),
});

const argsMatchersSchema = z.record(z.string(), z.array(z.string()));
const approvalRuleSchema = z.record(z.string(), z.object({ argsMatchers: argsMatchersSchema.optional() }).nullable());

export const approvalSchema = z.object({
  byDefault: z.enum(['allow', 'ask', 'deny']).optional(),
  allow: approvalRuleSchema.optional(),
  ask: approvalRuleSchema.optional(),
  deny: approvalRuleSchema.optional(),
});

export const configSchema = z.object({
  providers: z.record(z.string(), providerSchema).default({}),
  defaultModel: z.string().optional(),
  toolCall: z
    .object({
      approval: approvalSchema.default({}),
      shellCommand: z.object({ timeoutSeconds: z.number().positive().optional(), maxOutputChars: z.number().int().positive().optional() }).optional(),
    })
    .default({ approval: {} }),
  /** Tools disabled by name (`read_file` or `server__tool`). */
  disabledTools: z.array(z.string()).default([]),
  welcomeMessage: z.string().default('Welcome to patchbay. Type a prompt to start; @ adds context, / runs a command.'),
  /** Extra instructions appended to the system prompt. */
  systemPrompt: z.string().optional(),
  chat: z
    .object({
      /** Seconds without a byte from the LLM before the stream is declared stalled. */
      stallTimeoutSeconds: z.number().positive().default(120),
      maxRetries: z.number().int().min(0).default(4),
      /** Generate a title with the LLM after the first prompt. */
      generateTitles: z.boolean().default(true),
      defaultAgent: agentSchema.default('code'),
    })
    .default({ stallTimeoutSeconds: 120, maxRetries: 4, generateTitles: true, defaultAgent: 'code' }),
  context: z
    .object({
      webMaxChars: z.number().int().positive().default(100_000),
      repoMapMaxEntries: z.number().int().positive().default(2_000),
    })
    .default({ webMaxChars: 100_000, repoMapMaxEntries: 2_000 }),
  /** Filled by the MCP issue; accepted (and kept) now so configs written for ECA load. */
  mcpServers: z.record(z.string(), z.unknown()).default({}),
  mcpTimeoutSeconds: z.number().positive().default(60),
  /** How long a prompt waits for MCP servers still in their first start, so their tools are offered (0: no wait). */
  mcpStartWaitSeconds: z.number().min(0).default(30),
  /** Language servers (`languageServers.<name>`: {command, args?, extensions | languageIds, …}); validated by the LSP peer. */
  languageServers: z.record(z.string(), z.unknown()).default({}),
  /** OpenCtx (specs/openctx-protocol-0.1.md): providers patchbay uses, and the host that serves patchbay's. */
  openctx: openCtxConfigSchema
    .extend({
      host: z
        .object({
          enabled: z.boolean().default(true),
          /** 0 picks a free port (the address is in PATCHBAY_HOME/openctx/address). */
          port: z.number().int().min(0).max(65535).default(0),
          /** A user's own JS module providers to serve too: name → module path. */
          providers: z.record(z.string().regex(/^[A-Za-z0-9._-]+$/), z.string()).default({}),
        })
        .default({ enabled: true, port: 0, providers: {} }),
    })
    .default({ providers: {}, autoInclude: [], timeoutMs: 5000, host: { enabled: true, port: 0, providers: {} } }),
  /** The provider gateway (specs/tap-provider-gateway.md): tool providers over WebSocket. */
  gateway: gatewayConfigSchema,
  logLevel: z.enum(['error', 'warn', 'info', 'debug']).default('info'),
})
  // Unknown top-level keys are kept: ECA configs carry keys patchbay does not know (yet).
  .loose();

export type Config = z.infer<typeof configSchema>;
export type ProviderConfig = z.infer<typeof providerSchema>;
export type ApprovalConfig = z.infer<typeof approvalSchema>;
