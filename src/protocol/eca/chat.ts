/**
 * ECA chat methods, client → server (specs/eca-protocol.md "Code Assistant Features" and
 * eca-modern-additions.md). Each schema validates params at the boundary; a failure
 * becomes −32602 naming the field.
 */
import { z } from 'zod';
import { chatHistoryMetaSchema } from './history.js';
import { chatContextSchema, fileContextSchema } from './context.js';
import type { Agent } from './lifecycle.js';

/**
 * Old `behavior` values map onto agents (`agent` → `code`). An agent patchbay does not have
 * (a custom one selected in another ECA server) means "the default agent", as ECA does.
 */
export const agentNameSchema = z.string().transform((a): Agent | undefined => (a === 'plan' ? 'plan' : a === 'code' || a === 'agent' ? 'code' : undefined));

export const chatPromptParamsSchema = z.object({
  chatId: z.string().min(1).optional(),
  message: z.string(),
  model: z.string().optional(),
  agent: agentNameSchema.optional(),
  behavior: agentNameSchema.optional(),
  // Editors may send a bare `{type: 'cursor'}` they could not fill (no open file): drop those.
  contexts: z
    .array(z.unknown())
    .transform((cs) => cs.filter((c) => !(isObject(c) && c.type === 'cursor' && !('path' in c))))
    .pipe(z.array(chatContextSchema))
    .optional(),
  requestId: z.union([z.string(), z.number()]).optional(),
  contentId: z.string().optional(),
  /** Trust mode for this chat from now on (eca docs/protocol.md "Chat prompt"). */
  trust: z.boolean().optional(),
  /** The model variant (a named payload preset, e.g. reasoning effort) the editor shows; absent: none. */
  variant: z.string().optional(),
});
function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

export type ChatPromptParams = z.infer<typeof chatPromptParamsSchema>;

export const chatPromptResultSchema = z.object({
  chatId: z.string(),
  model: z.string(),
  status: z.enum(['prompting', 'login', 'error']),
});
export type ChatPromptResult = z.infer<typeof chatPromptResultSchema>;

export const toolCallApproveParamsSchema = z.object({
  chatId: z.string(),
  toolCallId: z.string(),
  save: z.enum(['session']).optional(),
});
export const toolCallRejectParamsSchema = z.object({ chatId: z.string(), toolCallId: z.string() });
export const promptStopParamsSchema = z.object({ chatId: z.string() });
export const chatDeleteParamsSchema = z.object({ chatId: z.string().optional() });
/** `chat/update` (eca docs/protocol.md "Chat update"): rename, and trust mode on or off. */
export const chatUpdateParamsSchema = z.object({ chatId: z.string().min(1), title: z.string().optional(), trust: z.boolean().optional() });

export const selectedBehaviorChangedSchema = z.object({ chatId: z.string().optional(), behavior: agentNameSchema });
export const selectedAgentChangedSchema = z.object({ chatId: z.string().optional(), agent: agentNameSchema });
export const selectedModelChangedSchema = z.object({
  chatId: z.string().optional(),
  model: z.string(),
  variant: z.string().optional(),
});

export const queryContextParamsSchema = z.object({
  chatId: z.string().optional(),
  query: z.string().default(''),
  contexts: z.array(z.unknown()).default([]),
});
export const queryFilesParamsSchema = z.object({ chatId: z.string().optional(), query: z.string().default('') });
export const chatClearParamsSchema = z.object({ chatId: z.string(), messages: z.boolean().optional() });
export const promptSteerParamsSchema = z.object({ chatId: z.string(), message: z.string() });
/** `chat/promptSteerRemove` (ECA docs/protocol.md "Chat steer prompt remove"): drop the steer not yet read. */
export const promptSteerRemoveParamsSchema = z.object({ chatId: z.string() });
export const queryCommandsParamsSchema = z.object({ chatId: z.string().optional(), query: z.string().default('') });

export const chatCommandSchema = z.object({
  name: z.string(),
  description: z.string(),
  /**
   * ECA's kinds as its server sends them: `mcpPrompt`, `native`, and for custom commands and skills
   * the keyword names `custom-prompt` and `skill` (commands.clj `all-commands`; eca-emacs matches
   * "custom-prompt"; docs/protocol.md's `customPrompt` is not what goes on the wire).
   */
  type: z.enum(['mcpPrompt', 'native', 'custom-prompt', 'skill']),
  arguments: z.array(z.object({ name: z.string(), description: z.string().optional(), required: z.boolean() })),
});
export type ChatCommand = z.infer<typeof chatCommandSchema>;

export const chatStatusSchema = z.enum(['running', 'idle', 'stopping']);
export type ChatStatus = z.infer<typeof chatStatusSchema>;

export const chatListParamsSchema = z.object({
  limit: z.number().int().positive().optional(),
  sortBy: z.enum(['updatedAt', 'createdAt']).optional(),
  /** patchbay extension: only chats started in this folder or one inside it (`patchbay chat --continue`, `/chats`). */
  folder: z.string().optional(),
});
export const chatSummarySchema = z.object({
  id: z.string(),
  title: z.string().optional(),
  status: chatStatusSchema,
  createdAt: z.number().optional(),
  updatedAt: z.number().optional(),
  model: z.string().optional(),
  messageCount: z.number(),
  /** patchbay extension: the workspace folder the chat was started in, when recorded. */
  folder: z.string().optional(),
  /** ECA's chat kinds, absent for a regular chat: `inline` for one made by `chat/inlinePrompt`. */
  kind: z.literal('inline').optional(),
});
export type ChatSummary = z.infer<typeof chatSummarySchema>;

/**
 * `chat/open` (ECA docs/protocol.md "Chat open"). Any of `limit`/`before`/`after` windows the
 * replay (eca-emacs sends `limit`) and the answer then carries `meta` for paging older through
 * `chat/history`; a stale cursor is answered `error` instead of a replay.
 */
export const chatOpenParamsSchema = z.object({
  chatId: z.string(),
  limit: z.number().int().positive().optional(),
  before: z.string().optional(),
  after: z.string().optional(),
});
/** The chat's effective selection, atomically: `model` null when it is no longer configured. */
export const chatSelectionSchema = z.object({
  model: z.string().nullable(),
  agent: z.string(),
  variant: z.string().nullable(),
  variants: z.array(z.string()),
  trust: z.boolean(),
});
export type ChatSelection = z.infer<typeof chatSelectionSchema>;
export const chatOpenResultSchema = z.object({
  found: z.boolean(),
  chatId: z.string().optional(),
  title: z.string().optional(),
  selection: chatSelectionSchema.optional(),
  meta: chatHistoryMetaSchema.optional(),
  error: z.object({ code: z.literal('cursor_expired'), message: z.string() }).optional(),
});
export type ChatOpenResult = z.infer<typeof chatOpenResultSchema>;

// ---- results and server → client notifications ---------------------------------------------

/** `chat/delete` and `chat/clear` answer an empty object. */
export const emptyResultSchema = z.object({});
export const queryCommandsResultSchema = z.object({ chatId: z.string().optional(), commands: z.array(chatCommandSchema) });
export const queryFilesResultSchema = z.object({ chatId: z.string().optional(), files: z.array(fileContextSchema) });
export const chatListResultSchema = z.object({ chats: z.array(chatSummarySchema) });

export const chatStatusChangedSchema = z.object({ chatId: z.string(), status: chatStatusSchema });
export const chatOpenedSchema = z.object({ chatId: z.string(), title: z.string().optional() });
export const chatClearedSchema = z.object({ chatId: z.string(), messages: z.boolean().optional() });
export const chatDeletedSchema = z.object({ chatId: z.string() });
