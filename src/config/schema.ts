/**
 * patchbay's config, ECA-compatible where ECA has the key. One zod schema is the
 * source of truth; the `Config` type is derived from it.
 */
import { z } from 'zod';
import { sandboxConfigSchema } from './sandbox.js';
import { PEERS } from '../peers/index.js';
import { agentSchema } from '../shapes/agent.js';
import { completionConfigSchema, rewriteConfigSchema } from './assist.js';
import { hooksSchema } from './hooks.js';
import { chatInlineConfigSchema } from './chat-inline.js';
import { memoryConfigSchema } from './memory.js';

export { providerSchema } from '../peers/llm/config.js';
import { providerSchema } from '../peers/llm/config.js';

const argsMatchersSchema = z.record(z.string(), z.array(z.string()));
const approvalRuleSchema = z.record(z.string(), z.object({ argsMatchers: argsMatchersSchema.optional() }).nullable());

export const approvalSchema = z.object({
  byDefault: z.enum(['allow', 'ask', 'deny']).optional(),
  allow: approvalRuleSchema.optional(),
  ask: approvalRuleSchema.optional(),
  deny: approvalRuleSchema.optional(),
  /** ECA's `insideWorkspace` (0.172): folders tools treat as inside the workspace (core/tool-calls/inside-workspace.ts). */
  insideWorkspace: z.array(z.string()).optional(),
});

type PeerShapes = UnionToIntersection<(typeof PEERS)[number]['config']>;
type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;

/** Every peer's config keys in one shape; a key two peers claim is a bug caught here at start-up. */
function peerConfigShape(): PeerShapes {
  const shape: Record<string, z.ZodType> = {};
  for (const peer of PEERS) {
    for (const [key, schema] of Object.entries(peer.config)) {
      if (key in shape) throw new Error(`config key "${key}" is claimed by two peers`);
      shape[key] = schema;
    }
  }
  return shape as PeerShapes;
}

export const configSchema = z
  .object({
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
    /** ECA's `rules`: more rule files or folders (src/runtime/instructions.ts); relative paths from each workspace folder. */
    rules: z.array(z.object({ path: z.string() }).loose()).optional(),
    /**
     * ECA's `includeParentAgentsFiles`: `true` reads AGENTS.md of every parent folder up to the
     * filesystem root (as ECA), `false` only the workspace folder's; unset: parents up to the git root.
     */
    includeParentAgentsFiles: z.boolean().optional(),
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
        /** New chats start in trust mode (tool calls that would ask run without asking; deny still denies). */
        defaultTrust: z.boolean().default(false),
        /**
         * ECA's key: chats pick up system prompt changes (AGENTS.md, rules, prompts) mid-chat, which
         * re-bills the provider's prompt cache. Off: changes apply to new chats, or after `/sync-system-prompt`.
         */
        autoSyncSystemPrompt: z.boolean().default(false),
      })
      .default({ stallTimeoutSeconds: 120, maxRetries: 4, generateTitles: true, defaultAgent: 'code', defaultTrust: false, autoSyncSystemPrompt: false }),
    /** Chats made by `chat/inlinePrompt` (./chat-inline.ts). */
    chatInline: chatInlineConfigSchema.optional(),
    /**
     * Share (%) of the model's context window at which the chat is compacted automatically (ECA's
     * key; also per agent as `agent.<name>.autoCompactPercentage`). `null` turns it off.
     */
    autoCompactPercentage: z.number().gt(0).max(100).nullable().default(75),
    context: z
      .object({
        webMaxChars: z.number().int().positive().default(100_000),
        repoMapMaxEntries: z.number().int().positive().default(2_000),
      })
      .default({ webMaxChars: 100_000, repoMapMaxEntries: 2_000 }),
    /** Agents defined in the config (ECA `agent`); those with `mode: "subagent"` can be spawned (runtime/agent-defs.ts reads them). */
    agent: z.record(z.string(), z.unknown()).optional(),
    /** How many `spawn_agent` calls of one model step run at once; the rest wait. */
    subagents: z.object({ maxParallel: z.number().int().min(1).default(3) }).default({ maxParallel: 3 }),
    /** Inline completion and rewrite (./assist.ts). */
    completion: completionConfigSchema.default({}),
    rewrite: rewriteConfigSchema.default({ fullFileMaxLines: 2000 }),
    /** Shell actions run on chat events (ECA's `hooks`, ./hooks.ts; core/hooks/). */
    hooks: hooksSchema.optional(),
    /** The OS sandbox commands run in (./sandbox.ts, docs/sandbox.md). */
    sandbox: sandboxConfigSchema.optional(),
    /** Durable memory (./memory.ts, core/memory/): Markdown files under the user config folder. */
    memory: memoryConfigSchema.optional(),
    /** Prompts that replace patchbay's own (ECA's `prompts`); other ECA keys in it are kept and ignored. */
    prompts: z.looseObject({ memoryConsolidate: z.string().optional() }).optional(),
    /**
     * ECA's remote API (src/server/eca/remote/): a second front end (a browser, a phone) attached to this
     * server over HTTP + SSE, on 127.0.0.1 only. `port` unset: 7777, or the next free of 20; 0: any
     * free port. `password` unset: a generated token (in `$PATCHBAY_HOME/remote/run/<pid>.json`).
     */
    remote: z
      .object({
        enabled: z.boolean().default(false),
        port: z.number().int().min(0).max(65535).optional(),
        password: z.string().min(1).optional(),
      })
      .optional(),
    // Each peer's own keys (mcpServers, languageServers, openctx, gateway, …): src/peers/index.ts.
    ...peerConfigShape(),
    logLevel: z.enum(['error', 'warn', 'info', 'debug']).default('info'),
    /** More skill folders (a skill's own, or one holding many), as ECA's `skills: [{path}]`. */
    skills: z.array(z.looseObject({ path: z.string() })).optional(),
    /** More custom command files or folders, as ECA's `commands: [{path}]`. */
    commands: z.array(z.looseObject({ path: z.string() })).optional(),
  })
  // Unknown top-level keys are kept: ECA configs carry keys patchbay does not know (yet).
  .loose();

export type Config = z.infer<typeof configSchema>;
export type { ProviderConfig } from '../peers/llm/config.js';
export type ApprovalConfig = z.infer<typeof approvalSchema>;
