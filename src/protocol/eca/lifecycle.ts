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
          /** ECA docs/protocol.md `initialize`: `askQuestion` means the client answers `chat/askQuestion`. */
          chatCapabilities: z.object({ askQuestion: z.boolean().optional() }).optional(),
        })
        .optional(),
    })
    .loose()
    .default({}),
  workspaceFolders: z.array(workspaceFolderSchema).nullable().optional(),
});
export type InitializeParams = z.infer<typeof initializeParamsSchema>;

/**
 * LSP's `workspace/didChangeWorkspaceFolders` (specs/lsp-3.0.md; ECA src/eca/server.clj and
 * `workspace-did-change-folders` in src/eca/handlers.clj), as eca-emacs sends it when a folder is
 * added or removed (eca-util.el `eca--session-add-workspace-folder`/`-remove-workspace-folder`):
 * `{event: {added: [{uri, name}], removed: [...]}}`, the other list empty.
 */
export const didChangeWorkspaceFoldersParamsSchema = z.object({
  event: z.object({ added: z.array(workspaceFolderSchema).default([]), removed: z.array(workspaceFolderSchema).default([]) }),
});
export type DidChangeWorkspaceFoldersParams = z.infer<typeof didChangeWorkspaceFoldersParamsSchema>;

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
      /** The selected model's variants (named presets such as reasoning effort); `[]`: none, clients show `-`. */
      variants: z.array(z.string()).optional(),
      /** The variant to select; `null` clears the selection (the model has no variants). */
      selectVariant: z.string().nullable().optional(),
      welcomeMessage: z.string().optional(),
      /** The chat's trust toggle (auto-approval), sent scoped by `chatId` when a chat is resumed. */
      selectTrust: z.boolean().optional(),
      /** ECA still sends these (deprecated there, read by older plugins): same values as the `select*` fields. */
      defaultModel: z.string().optional(),
      defaultAgent: z.string().optional(),
      defaultBehavior: z.string().optional(),
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

/** ECA's `ServerPrompt`: an MCP server's prompt as the tool panels list it. */
export const serverPromptSchema = z.object({
  name: z.string(),
  description: z.string(),
  arguments: z.array(z.object({ name: z.string(), description: z.string(), required: z.boolean() })).optional(),
});

/** ECA's `ServerResource`. */
export const serverResourceSchema = z.object({ uri: z.string(), name: z.string(), description: z.string(), mimeType: z.string() });

/**
 * `tool/serverUpdated` (specs/eca-protocol.md "Tool updated"). Plugins tell the built-in server
 * from the others by its name "ECA" (eca-emacs `eca-mcp-servers`) or its type `native`
 * (eca-webview `ChatSubHeader`); every other entry is an MCP-like server with the MCP fields.
 */
export const toolServerUpdatedSchema = z.object({
  type: z.string(),
  name: z.string(),
  status: z.enum(['running', 'starting', 'stopped', 'failed', 'disabled', 'requires-auth']),
  command: z.string().optional(),
  args: z.array(z.string()).optional(),
  url: z.string().optional(),
  tools: z.array(serverToolSchema).optional(),
  prompts: z.array(serverPromptSchema).optional(),
  resources: z.array(serverResourceSchema).optional(),
  /** Switched off in the config (`disabled: true`). */
  disabled: z.boolean().optional(),
  /** The server holds an OAuth access token (the plugins then offer "logout"). */
  hasAuth: z.boolean().optional(),
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
