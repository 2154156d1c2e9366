/** `chat/contentReceived` contents (specs/eca-protocol.md "Chat Content Received", eca-modern-additions.md "Tool calls"). */
import { z } from 'zod';

const fileChangeSchema = z.object({
  type: z.literal('fileChange'),
  path: z.string(),
  diff: z.string(),
  linesAdded: z.number(),
  linesRemoved: z.number(),
});

/** ECA `TaskDetails` (docs/protocol.md "ToolCallDetails"): the chat's task list, rendered by the plugins as a checklist. */
export const taskDetailsSchema = z.object({
  type: z.literal('task'),
  tasks: z.array(
    z.object({
      id: z.number(),
      subject: z.string(),
      description: z.string(),
      status: z.enum(['pending', 'in-progress', 'done']),
      priority: z.enum(['high', 'medium', 'low']),
      isBlocked: z.boolean(),
      /** Only present when the task has dependencies. */
      blockedBy: z.array(z.number()).optional(),
    }),
  ),
  inProgressTaskIds: z.array(z.number()),
  summary: z.object({ done: z.number(), inProgress: z.number(), pending: z.number(), total: z.number() }),
  activeSummary: z.string().optional(),
});
export type TaskDetails = z.infer<typeof taskDetailsSchema>;

/** ECA `ShellCommandDetails` (docs/protocol.md): eca-webview `ChatToolCall.tsx` `isBackground`, eca-emacs `bg?` read `background`. */
const shellCommandDetailsSchema = z.object({
  type: z.literal('shellCommand'),
  commands: z.array(z.object({ command: z.string(), args: z.array(z.string()), approvalKey: z.string().optional(), remembered: z.boolean().optional() })),
  background: z.boolean().optional(),
});

/** ECA `SubagentDetails` (docs/protocol.md): eca-emacs maps `subagentChatId` to the call to nest the child's contents under it. */
const subagentDetailsSchema = z.object({
  type: z.literal('subagent'),
  subagentChatId: z.string().optional(),
  model: z.string(),
  variant: z.string().optional(),
  agentName: z.string(),
  maxSteps: z.number().optional(),
  step: z.number(),
});

const toolCallBase = {
  origin: z.string(),
  id: z.string(),
  name: z.string(),
  server: z.string().optional(),
  summary: z.string().optional(),
  details: z.discriminatedUnion('type', [fileChangeSchema, taskDetailsSchema, shellCommandDetailsSchema, subagentDetailsSchema]).optional(),
};

export const toolOutputSchema = z.union([z.object({ type: z.literal('text'), text: z.string() }), z.object({ type: z.literal('image'), data: z.string(), mimeType: z.string() })]);

export const rejectReasonSchema = z.enum(['user', 'userChoiceDeny', 'userConfigDeny', 'hookRejected', 'userPromptStop']);
export type RejectReason = z.infer<typeof rejectReasonSchema>;

export const chatContentSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('text'),
    text: z.string(),
    contentId: z.string().optional(),
    /** patchbay extension, on a system text: it says why the turn failed (the turn then ends with stopReason `error`). */
    error: z.boolean().optional(),
    /** patchbay extension, on a system text: a note on patchbay's workings (the prompt cache), for a verbose view only. */
    internal: z.boolean().optional(),
  }),
  z.object({ type: z.literal('url'), title: z.string(), url: z.string() }),
  /**
   * ECA `ChatImageContent`: one per image a tool returned (after its `toolCalled`, whose outputs
   * then hold only text: ECA tool_calls.clj `:send-toolCalled`) or a user attached (on replay).
   * Raw base64, no `data:` prefix.
   */
  z.object({ type: z.literal('image'), mediaType: z.string(), base64: z.string() }),
  /** Chat metadata, e.g. the title generated after the first prompt. */
  z.object({ type: z.literal('metadata'), title: z.string().optional() }),
  z.object({
    type: z.literal('progress'),
    state: z.enum(['running', 'finished']),
    text: z.string(),
    /**
     * patchbay extension, on the `finished` that ends a turn: end_turn, cancelled, max_tokens,
     * refusal or error. A string, not an enum: a client must not drop the content over a new value.
     */
    stopReason: z.string().optional(),
  }),
  z.object({
    type: z.literal('usage'),
    sessionTokens: z.number(),
    /** Sent by ECA and read by older plugins. */
    messageInputTokens: z.number().optional(),
    messageOutputTokens: z.number().optional(),
    lastMessageCost: z.string().optional(),
    sessionCost: z.string().optional(),
    limit: z.object({ context: z.number(), output: z.number() }).optional(),
    /** The share of the window at which the server compacts the chat itself (ECA docs/protocol.md `ChatUsageContent`). */
    autoCompactPercentage: z.number().optional(),
    /** How the context window is filled, by category, with ECA's canonical colors and emoji swatches. */
    contextBreakdown: z
      .object({
        categories: z.array(z.object({ name: z.string(), tokens: z.number(), color: z.string(), emoji: z.string() })),
        usedTokens: z.number(),
        freeTokens: z.number().optional(),
        contextLimit: z.number().optional(),
        freeColor: z.string().optional(),
        freeEmoji: z.string().optional(),
      })
      .optional(),
  }),
  /** A named checkpoint in the chat (ECA docs/protocol.md `ChatFlagContent`), sent with role `system`. */
  z.object({ type: z.literal('flag'), text: z.string(), contentId: z.string() }),
  z.object({ type: z.literal('reasonStarted'), id: z.string() }),
  /** A hook action runs (ECA docs/protocol.md `ChatHookActionStartedContent`), role `system`. */
  z.object({ type: z.literal('hookActionStarted'), id: z.string(), name: z.string(), actionType: z.literal('shell') }),
  /** ECA docs/protocol.md `ChatHookActionFinishedContent`; `toolCallId` for preToolCall/postToolCall hooks. */
  z.object({
    type: z.literal('hookActionFinished'),
    id: z.string(),
    name: z.string(),
    actionType: z.literal('shell'),
    status: z.number(),
    output: z.string().optional(),
    error: z.string().optional(),
    toolCallId: z.string().optional(),
  }),
  z.object({ type: z.literal('reasonText'), id: z.string(), text: z.string() }),
  z.object({ type: z.literal('reasonFinished'), id: z.string(), totalTimeMs: z.number() }),
  z.object({ type: z.literal('toolCallPrepare'), ...toolCallBase, argumentsText: z.string() }),
  z.object({
    type: z.literal('toolCallRun'),
    ...toolCallBase,
    arguments: z.record(z.string(), z.unknown()),
    manualApproval: z.boolean(),
  }),
  z.object({ type: z.literal('toolCallRunning'), ...toolCallBase, arguments: z.record(z.string(), z.unknown()) }),
  z.object({
    type: z.literal('toolCalled'),
    ...toolCallBase,
    arguments: z.record(z.string(), z.unknown()),
    error: z.boolean(),
    outputs: z.array(toolOutputSchema),
    totalTimeMs: z.number(),
  }),
  z.object({
    type: z.literal('toolCallRejected'),
    ...toolCallBase,
    arguments: z.record(z.string(), z.unknown()),
    reason: rejectReasonSchema,
  }),
]);
export type ChatContent = z.infer<typeof chatContentSchema>;

export const contentReceivedSchema = z.object({
  chatId: z.string(),
  /** The parent chat, when this chat is a subagent's (ECA docs/protocol.md "Chat Content Received"). */
  parentChatId: z.string().optional(),
  role: z.enum(['user', 'system', 'assistant']),
  content: chatContentSchema,
});
export type ContentReceived = z.infer<typeof contentReceivedSchema>;
export type Role = ContentReceived['role'];
