/**
 * What happens in a chat, in core's own terms: every façade (ECA today, ACP next) translates
 * these into its protocol (src/server/eca/eca-events.ts for ECA). The schemas are the source of
 * truth; core emits plain objects of these types (not parsed on the hot path).
 */
import { z } from 'zod';
import { taskDetailsSchema, toolDetailsSchema, toolOutputSchema } from '../shapes/tool.js';

export const chatStatusSchema = z.enum(['idle', 'running', 'stopping']);
export type ChatStatus = z.infer<typeof chatStatusSchema>;

/**
 * Why a tool call did not run: `user` (the user said no), `denied` (the config, the agent or the
 * front end denies it without asking), `stopped` (the turn was stopped), `hook` (a preToolCall hook rejected it). Stored with each chat's
 * messages (core/chat/stored-message.ts; format 1 stored ECA's names, upgraded on read).
 */
export const rejectReasonSchema = z.enum(['user', 'denied', 'stopped', 'hook']);
export type RejectReason = z.infer<typeof rejectReasonSchema>;

/** How a turn ended; a façade reports it (ECA: `stopReason` on the final `progress finished`). */
export const stopReasonSchema = z.enum(['end_turn', 'cancelled', 'max_tokens', 'refusal', 'error']);
export type StopReason = z.infer<typeof stopReasonSchema>;
export const turnOutcomeSchema = z.object({ stopReason: stopReasonSchema, error: z.string().optional() });
export type TurnOutcome = z.infer<typeof turnOutcomeSchema>;

/** Who a tool call is: the same fields in every state (arguments once they are complete). */
const toolCallFields = {
  id: z.string(),
  name: z.string(),
  server: z.string(),
  /** Where the tool comes from: `native`, `mcp`, a gateway provider… */
  origin: z.string(),
  arguments: z.record(z.string(), z.unknown()).optional(),
  summary: z.string().optional(),
  details: toolDetailsSchema.optional(),
  /** A stored call redrawn (a replay): façades show its stages but say nothing of what the chat is doing now. */
  replayed: z.boolean().optional(),
};

/**
 * A tool call's state change. `announced`: decided and shown, waiting for the user when
 * `needsApproval`; `stopping`: the turn was stopped and the tool has not returned within the
 * grace period (the turn ends without it; its late result is still stored).
 */
export const toolCallEventSchema = z.discriminatedUnion('state', [
  z.object({ type: z.literal('toolCall'), state: z.literal('preparing'), ...toolCallFields, argumentsDelta: z.string() }),
  z.object({ type: z.literal('toolCall'), state: z.literal('announced'), ...toolCallFields, needsApproval: z.boolean() }),
  z.object({ type: z.literal('toolCall'), state: z.literal('running'), ...toolCallFields }),
  z.object({ type: z.literal('toolCall'), state: z.literal('stopping'), ...toolCallFields }),
  z.object({ type: z.literal('toolCall'), state: z.literal('done'), ...toolCallFields, error: z.boolean(), outputs: z.array(toolOutputSchema), totalTimeMs: z.number() }),
  z.object({ type: z.literal('toolCall'), state: z.literal('rejected'), ...toolCallFields, reason: rejectReasonSchema }),
]);
export type ToolCallEvent = z.infer<typeof toolCallEventSchema>;

const otherEventSchema = z.discriminatedUnion('type', [
  /** A user message entered the chat (`id`: the client's id for it, when it gave one). */
  z.object({ type: z.literal('userMessage'), text: z.string(), id: z.string().optional() }),
  /**
   * An image the user attached, redrawn with its message when a stored chat is opened (a live
   * prompt's images are the front end's own). Tool-result images ride on the tool call's outputs.
   */
  z.object({ type: z.literal('userImage'), mediaType: z.string(), base64: z.string() }),
  /**
   * A piece of the assistant's answer. `id` names the text part it belongs to (stored with it, so a
   * replay names it alike; parts stored before text had ids have none).
   */
  z.object({ type: z.literal('assistantText'), text: z.string(), id: z.string().optional() }),
  z.object({ type: z.literal('reasoningStarted'), id: z.string() }),
  z.object({ type: z.literal('reasoningDelta'), id: z.string(), text: z.string() }),
  z.object({ type: z.literal('reasoningFinished'), id: z.string(), totalTimeMs: z.number() }),
  /**
   * Tokens of the last model step; `contextTokens`, what that request filled of the context window
   * (its input, cache reads and writes included, plus its output: ECA's `sessionTokens`, which the
   * editors show against the limit); costs in USD when the model is priced (`chatCost`: the chat's).
   */
  z.object({
    type: z.literal('usage'),
    stepInputTokens: z.number(),
    stepOutputTokens: z.number(),
    contextTokens: z.number(),
    stepCost: z.number().optional(),
    chatCost: z.number().optional(),
    limit: z.object({ context: z.number(), output: z.number() }).optional(),
    /** The share of the window at which the chat compacts itself; absent when off or the window is unknown. */
    autoCompactPercentage: z.number().optional(),
    /** How the last request filled the context window, by category (turn/context-size.ts). */
    context: z
      .object({
        categories: z.array(z.object({ name: z.string(), tokens: z.number() })),
        usedTokens: z.number(),
        contextLimit: z.number().optional(),
      })
      .optional(),
  }),
  z.object({ type: z.literal('status'), status: chatStatusSchema }),
  /** The chat's title (none yet: a resumed chat without one, so a view can reset it). */
  z.object({ type: z.literal('title'), title: z.string().optional() }),
  /** A flag (a named bookmark) the user put in the chat; `id` names it for removal and forks. */
  z.object({ type: z.literal('flag'), id: z.string(), text: z.string() }),
  /**
   * Text for the user from patchbay itself (a command's output, a skipped context, a surfaced event).
   * `internal`: it tells how patchbay works inside (the prompt cache), nothing the user acts on;
   * a terminal shows it only when asked to be verbose.
   */
  z.object({ type: z.literal('notice'), text: z.string(), internal: z.boolean().optional() }),
  /** What the turn is doing now (waiting for the model, retrying, waiting for MCP servers). */
  z.object({ type: z.literal('progress'), text: z.string() }),
  /** Something failed; the turn ends with `error` unless it was stopped. */
  z.object({ type: z.literal('error'), text: z.string() }),
  /** The chat's task list had every task done and is cleared as a new prompt starts; `details` is the empty list. */
  z.object({ type: z.literal('taskListCleared'), details: taskDetailsSchema }),
  /** A hook action started (core/hooks/); `id` pairs it with its `hookActionFinished`. */
  z.object({ type: z.literal('hookActionStarted'), id: z.string(), name: z.string(), actionType: z.literal('shell') }),
  /** A hook action ended: its exit status, the text of its block, its stderr; `toolCallId` for tool hooks. */
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
  /**
   * The chat is being compacted (`/compact` or auto-compaction, core/turn/compaction.ts): `started`
   * once the summary is asked for, then how it ended; `summary` is what the model reads from then
   * on. `id` pairs the events of one compaction.
   */
  z.object({
    type: z.literal('compaction'),
    id: z.string(),
    status: z.enum(['started', 'completed', 'failed', 'cancelled']),
    trigger: z.enum(['manual', 'auto']),
    summary: z.string().optional(),
    error: z.string().optional(),
  }),
  /** The turn is over and the chat is idle again (no separate `status: idle` precedes it). */
  z.object({ type: z.literal('turnEnded'), ...turnOutcomeSchema.shape }),
]);

export const chatEventSchema = z.union([otherEventSchema, toolCallEventSchema]);
export type ChatEvent = z.infer<typeof chatEventSchema>;

/** How core tells whoever drives it (a façade) what happened. */
export interface ChatEvents {
  /** `parentChatId`: the chat is a subagent's, run for a tool call of that chat. */
  event(chatId: string, e: ChatEvent, parentChatId?: string): void;
  opened(chatId: string, title?: string): void;
  cleared(chatId: string): void;
  deleted(chatId: string): void;
  showMessage(type: 'error' | 'warning' | 'info', message: string): void;
  /**
   * Runs `fn`, delivering what it emits in one write (one wake-up of the editor per burst
   * instead of one per message). Optional: without it, `fn` simply runs.
   */
  together?(fn: () => void): void;
}
