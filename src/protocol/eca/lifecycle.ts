/** ECA lifecycle messages (specs/eca-protocol.md "Lifecycle Messages"). */
import { z } from 'zod';

export const workspaceFolderSchema = z.object({ uri: z.string(), name: z.string().optional() });

export const initializeParamsSchema = z.object({
  processId: z.number().int().nullable().optional(),
  clientInfo: z.object({ name: z.string(), version: z.string().optional() }).optional(),
  initializationOptions: z.record(z.string(), z.unknown()).nullable().optional(),
  capabilities: z
    .object({
      codeAssistant: z
        .object({
          chat: z.boolean().optional(),
          editor: z.object({ diagnostics: z.boolean().optional() }).optional(),
        })
        .optional(),
    })
    .loose()
    .default({}),
  workspaceFolders: z.array(workspaceFolderSchema).nullable().optional(),
});
export type InitializeParams = z.infer<typeof initializeParamsSchema>;

export const initializeResultSchema = z.object({
  chatWelcomeMessage: z.string().optional(),
  /** Older ECA plugins read the agents (then called behaviors) from here. */
  chatBehaviors: z.array(z.string()).optional(),
  chatDefaultBehavior: z.string().optional(),
});
export type InitializeResult = z.infer<typeof initializeResultSchema>;

export const agentSchema = z.enum(['code', 'plan']);
export type Agent = z.infer<typeof agentSchema>;

/** `config/updated`: old clients read `behaviors`/`selectBehavior`, new ones `agents`/`selectAgent`. */
export const configUpdatedSchema = z.object({
  chatId: z.string().optional(),
  chat: z
    .object({
      models: z.array(z.string()).optional(),
      agents: z.array(z.string()).optional(),
      behaviors: z.array(z.string()).optional(),
      selectModel: z.string().optional(),
      selectAgent: z.string().optional(),
      selectBehavior: z.string().optional(),
      welcomeMessage: z.string().optional(),
    })
    .optional(),
});
export type ConfigUpdated = z.infer<typeof configUpdatedSchema>;

export const serverToolSchema = z.object({
  name: z.string(),
  description: z.string(),
  parameters: z.unknown(),
  disabled: z.boolean().optional(),
});

export const toolServerUpdatedSchema = z.object({
  type: z.string(),
  name: z.string(),
  status: z.enum(['running', 'starting', 'stopped', 'failed', 'disabled']),
  command: z.string().optional(),
  args: z.array(z.string()).optional(),
  tools: z.array(serverToolSchema).optional(),
  /** Why a server failed (patchbay addition; clients ignore what they do not know). */
  error: z.string().optional(),
});
export type ToolServerUpdated = z.infer<typeof toolServerUpdatedSchema>;

/** `mcp/startServer`, `mcp/stopServer` (notifications). */
export const mcpServerParamsSchema = z.object({ name: z.string().min(1) });

/**
 * `$/progress` (server → client): a start-up task began or ended (ECA docs/protocol.md "progress";
 * eca-desktop leaves "Initializing" once every `start` has its `finish`).
 */
export const progressSchema = z.object({ type: z.enum(['start', 'finish']), taskId: z.string(), title: z.string() });
export type Progress = z.infer<typeof progressSchema>;

export const showMessageSchema = z.object({ type: z.enum(['error', 'warning', 'info']), message: z.string() });
export type ShowMessage = z.infer<typeof showMessageSchema>;

/** `editor/getDiagnostics` (server → client, when the editor declared the capability). */
export const getDiagnosticsParamsSchema = z.object({ uri: z.string().optional() });
/** Each diagnostic is checked where it is used: editors report severities their own way. */
export const getDiagnosticsResultSchema = z.object({ diagnostics: z.array(z.unknown()).optional() }).nullable();
