/**
 * The agent loop for one prompt: ask the LLM, stream what it says to the editor, run the
 * tool calls it makes (each through the ToolCall state machine), feed the results back,
 * until it answers without tools, is stopped, or fails.
 */
import { randomUUID } from 'node:crypto';
import type { AssistantPart, LlmEvent, LlmImage, ModelEntry } from '../../shapes/llm.js';
import type { LiveChat, Usage } from '../chat/chat.js';
import type { ChatDeps } from '../deps.js';
import type { ChatEvent, StopReason, TurnOutcome } from '../events.js';
import { toolImages, type StoredMessage } from '../chat/messages.js';
import { noVisionText } from './prompt-images.js';
import type { ToolCallRecord } from '../persistence.js';
import { systemPrompt, type SystemPrompt } from './system-prompt.js';
import { pinnedPrompt, promptSignature } from './pinned-prompt.js';
import type { PromptSection } from './prompt-sections.js';
import { ToolCall } from '../tool-calls/tool-call.js';
import { ContextWindow, type StepContext } from './context-window.js';
import type { Tool } from '../../shapes/tool.js';
import type { Agent } from '../../shapes/agent.js';
import { errorMessage, logger } from '../../util/log.js';
import { llmName, toolSpecs } from '../../shapes/tool-names.js';
import { requestPayload, variantNames } from '../../shapes/variants.js';
import { stoppedText, type HookStop } from '../hooks/effects.js';
import { hookChat } from '../hooks/hook-chat.js';
import { chargeUsage, type StepUsage } from './usage.js';
import { runToolCalls, subagentTools } from '../subagents/step.js';
import { toolRoots } from '../tool-calls/inside-workspace.js';
import { subagentApproval } from '../subagents/definitions.js';
import { StepCallIds, usedCallIds } from '../tool-calls/tool-call-ids.js';

const log = logger('turn');
/**
 * A turn that still wants tools after this many model steps ends with stop reason `error`
 * (the model did not reach an answer; the user is told and can say "go on").
 */
const MAX_STEPS = 50;

export interface TurnInput {
  /** Text shown to the user as their message (omitted for commands that only prompt the LLM). */
  userText: string;
  contentId?: string;
  /** Extra text the LLM gets with the user message (rendered contexts, prompt templates). */
  contextText?: string;
  /** The user message is already in the chat (committed before its contexts loaded). */
  userStored?: boolean;
}

/**
 * Commits a user message to the chat at once, before anything slow (contexts, web pages) runs,
 * and returns how to attach the contexts once they are rendered.
 */
export function rememberUserMessage(chat: LiveChat, store: ChatDeps['store'], text: string, contentId?: string): UserMessageHandle {
  const message: Extract<StoredMessage, { role: 'user' }> = { role: 'user', text, ...(contentId ? { contentId } : {}) };
  chat.stored.push(message);
  const seq = store.appendMessage(chat.id, message);
  return {
    attachContext(contextText, images = []) {
      if (!contextText && !images.length) return;
      if (contextText) message.contextText = contextText;
      if (images.length) message.images = images;
      store.replaceMessage(chat.id, seq, message);
    },
    // A preRequest hook rewrote the prompt, added to it, or blocked it (core/hooks/turn-hooks.ts).
    rewrite(change) {
      change(message);
      store.replaceMessage(chat.id, seq, message);
    },
    drop() {
      const at = chat.stored.indexOf(message);
      if (at >= 0) chat.stored.splice(at, 1);
      store.deleteMessage(chat.id, seq);
    },
  };
}

export interface UserMessageHandle {
  attachContext(contextText: string, images?: LlmImage[]): void;
  rewrite(change: (m: { text: string; contextText?: string }) => void): void;
  drop(): void;
}

const stoppedOutcomes = new WeakSet<TurnOutcome>();

/** The turn was ended by a hook's `continue: false` (hooks/turn-hooks.ts then runs no postRequest). */
export function stoppedByHook(outcome: TurnOutcome): boolean {
  return stoppedOutcomes.has(outcome);
}

/** Runs one turn; resolves with how it ended (a stop is reported by the caller, who knows why). */
export async function runTurn(chat: LiveChat, entry: ModelEntry, input: TurnInput, deps: ChatDeps, abort: AbortController): Promise<TurnOutcome> {
  const { events, store } = deps;
  const signal = abort.signal;
  const config = deps.config();
  // The agent is fixed for the whole turn, whatever is selected meanwhile.
  const agent = chat.agent;
  const emit = (e: ChatEvent) => events.event(chat.id, e);
  const fail = (text: string): TurnOutcome => (emit({ type: 'error', text }), { stopReason: 'error', error: text });
  const progress = (text: string) => emit({ type: 'progress', text });
  const cancelled: TurnOutcome = { stopReason: 'cancelled' };
  // A hook's `continue: false` ends the turn (ECA docs/config/hooks.md "Stopping"): no postRequest or follow-up after it.
  const hookStopped = (stop: HookStop): TurnOutcome => {
    emit({ type: 'notice', text: stoppedText(stop) });
    const outcome: TurnOutcome = { stopReason: 'end_turn' };
    stoppedOutcomes.add(outcome);
    return outcome;
  };

  /** The position `remember` stored the last message at (tool calls name their assistant message by it). */
  let lastSeq = 0;
  /** Commits a message; returns how to replace it later (a stopped tool's late result). */
  const remember = (m: StoredMessage, toolCall?: ToolCallRecord) => {
    chat.stored.push(m);
    const seq = store.appendMessage(chat.id, m, toolCall);
    lastSeq = seq;
    return (next: StoredMessage, row?: ToolCallRecord) => {
      const at = chat.stored.indexOf(m);
      // Gone from the chat (cleared) meanwhile: nothing to replace.
      if (at < 0) return;
      chat.stored[at] = next;
      store.replaceMessage(chat.id, seq, next);
      if (row) store.saveToolCall(row);
    };
  };

  if (!input.userStored) {
    remember({ role: 'user', text: input.userText, ...(input.contentId ? { contentId: input.contentId } : {}), ...(input.contextText ? { contextText: input.contextText } : {}) });
  }

  let client;
  try {
    client = await deps.clientFor(entry, signal);
  } catch (e) {
    if (signal.aborted) return cancelled;
    return fail(`Could not start the ${entry.provider} client: ${errorMessage(e)}`);
  }

  // Fixed for the whole turn, as the agent. An unknown variant adds nothing (as ECA's
  // `extra-payload-considering-variant`), and the user is told why the request goes without it.
  const { payload, unknownVariant } = requestPayload(entry, chat.variant);
  if (unknownVariant) {
    const offered = variantNames(entry);
    emit({
      type: 'notice',
      text: `Variant "${unknownVariant}" is not one of ${entry.id}'s (${offered.length ? offered.join(', ') : 'it has none'}); the request is sent without it.`,
    });
  }

  // Auto-compaction and context-overflow recovery (context-window.ts).
  const contextWindow = new ContextWindow(chat, entry, deps, signal, emit);
  const images = entry.imageInput === true;
  // A subagent's own rules: its definition's approvals over the config's, its step limit.
  const approval = subagentApproval(config.toolCall.approval, chat.subagent?.def);
  const maxSteps = chat.subagent?.def.maxSteps ?? MAX_STEPS;
  // The provider's call ids as the chat's own: a repeated one is replaced (../tool-calls/tool-call-ids.ts). The
  // chat is read for them once per turn, not per step; each step's new calls are added as they start.
  const usedIds = usedCallIds(chat.stored);
  for (let step = 0; step < maxSteps; step++) {
    if (signal.aborted) return cancelled;
    chat.subagent?.onStep(step + 1);
    // Gateway events that arrived while this turn ran join the conversation at the next model step.
    for (const text of chat.injected.splice(0)) {
      remember({ role: 'user', text });
      emit({ type: 'userMessage', text, id: newId() });
    }
    // Ended background jobs too (ECA chat.clj `consume-pending-job-notifications!`): in the
    // history only, as ECA's `add-to-history!`, not shown to the editor as a user message.
    for (const text of chat.jobNotices.splice(0)) remember({ role: 'user', text });
    // So does a steer (ECA chat.clj `consume-steer-message!`): its user message, with an id of its
    // own, is also how the client learns it was read and must not be sent again as a prompt.
    const steer = chat.steer;
    chat.steer = undefined;
    if (steer !== undefined) {
      const id = newId();
      remember({ role: 'user', text: steer, contentId: id });
      emit({ type: 'userMessage', text: steer, id });
    }
    const compactStop = await contextWindow.beforeRequest();
    if (signal.aborted) return cancelled;
    if (compactStop) return hookStopped(compactStop);
    // A model with a small context window gets fewer tools (../tool-calls/tool-registry.ts `isSmallContext`).
    const offer = deps.tools.offer({ agent, approval, disabled: config.disabledTools, chatId: chat.id, contextWindow: entry.limit?.context });
    const tools = subagentTools(chat, offer.tools);
    // A call to a tool this request left out (disabledTools, a small-context model's trimmed set)
    // is refused as unknown, not run: the model named it from memory or an earlier turn.
    const withheld = offer.withheld;
    const toolOf = (name: string): Tool | undefined => (withheld.has(name) ? undefined : deps.tools.get(name, chat.id));
    progress(step === 0 ? 'Waiting model' : 'Continuing');
    const parts: AssistantPart[] = [];
    // `tool` is looked up once when the call starts, not again for every streamed argument piece.
    const calls: Array<{ id: string; name: string; args: Record<string, unknown>; tool?: Tool }> = [];
    const callIds = new StepCallIds(usedIds);
    const reasonStart = new Map<string, number>();
    /** The adapter's reasoning id → the one the editor sees (and the store keeps). */
    const reasonIds = new Map<string, string>();
    let stepUsage: Extract<LlmEvent, { type: 'usage' }> | undefined;
    let finish: Extract<LlmEvent, { type: 'finish' }>['reason'] | undefined;
    const lastText = () => {
      const p = parts.at(-1);
      return p?.type === 'text' ? p : undefined;
    };

    const handle = (ev: LlmEvent) => {
      switch (ev.type) {
        case 'text': {
          let p = lastText();
          if (p) p.text += ev.text;
          // Its id names it for the front end live and on replay (ACP `messageId`).
          else parts.push((p = { type: 'text', text: ev.text, id: randomUUID() }));
          emit({ type: 'assistantText', text: ev.text, ...(p.id ? { id: p.id } : {}) });
          break;
        }
        case 'reasoningStart': {
          // The adapters' ids ("reasoning-0", "thinking-1") repeat every step; the editor keys its
          // blocks by this id and sends it back to flag or fork after it, so it must be unique and
          // stored (ECA gives each reasoning a UUID and keeps it with the message).
          const id = randomUUID();
          reasonIds.set(ev.id, id);
          reasonStart.set(ev.id, Date.now());
          parts.push({ type: 'reasoning', text: '', id });
          emit({ type: 'reasoningStarted', id });
          break;
        }
        case 'reasoningDelta': {
          const p = [...parts].reverse().find((x) => x.type === 'reasoning');
          if (p && p.type === 'reasoning') p.text += ev.text;
          emit({ type: 'reasoningDelta', id: reasonIds.get(ev.id) ?? ev.id, text: ev.text });
          break;
        }
        case 'reasoningEnd': {
          const p = [...parts].reverse().find((x) => x.type === 'reasoning');
          if (p && p.type === 'reasoning') {
            if (ev.signature) p.signature = ev.signature;
            if (ev.redacted) p.redacted = ev.redacted;
            if (ev.itemId) p.itemId = ev.itemId;
            if (ev.encrypted) p.encrypted = ev.encrypted;
          }
          emit({ type: 'reasoningFinished', id: reasonIds.get(ev.id) ?? ev.id, totalTimeMs: Date.now() - (reasonStart.get(ev.id) ?? Date.now()) });
          break;
        }
        case 'toolCallStart':
        case 'toolCallDelta': {
          const callId = ev.type === 'toolCallStart' ? callIds.start(ev.id) : callIds.delta(ev.id);
          let call = calls.find((c) => c.id === callId);
          if (ev.type === 'toolCallStart') calls.push((call = { id: callId, name: ev.name, args: {}, tool: toolOf(ev.name) }));
          const name = call?.name ?? '';
          const tool = call?.tool;
          emit({
            type: 'toolCall',
            state: 'preparing',
            origin: tool?.origin ?? 'native',
            id: callId,
            name: tool?.name ?? name,
            server: tool?.server ?? (name.includes('__') ? name.slice(0, name.indexOf('__')) : 'unknown'),
            argumentsDelta: ev.type === 'toolCallDelta' ? ev.argsDelta : '',
          });
          break;
        }
        case 'toolCallEnd': {
          const callId = callIds.end(ev.id);
          const c = calls.find((x) => x.id === callId);
          if (c) c.args = ev.args;
          else calls.push({ id: callId, name: ev.name, args: ev.args });
          parts.push({ type: 'toolCall', id: callId, name: ev.name, args: ev.args });
          break;
        }
        case 'usage':
          stepUsage = ev;
          break;
        case 'finish':
          finish = ev.reason;
          break;
        case 'progress':
          progress(ev.text);
          break;
      }
    };

    let failure: unknown;
    try {
      const system = chatSystemPrompt(chat, agent, entry.id, tools, deps, {
        autoSync: config.chat.autoSyncSystemPrompt,
        notice: (text, internal) => emit({ type: 'notice', text, ...(internal ? { internal } : {}) }),
      });
      const sent = { system: system.text, systemStableLength: system.stableLength, sections: system.sections, tools: toolSpecs(tools), messages: contextWindow.messages(images) };
      contextWindow.sent(sent);
      const stream = deps.stream(
        client,
        {
          model: entry.modelName,
          system: system.text,
          systemStableLength: system.stableLength,
          messages: sent.messages,
          tools: sent.tools,
          maxOutputTokens: entry.limit?.output,
          signal,
          chatId: chat.id,
          ...(entry.cacheRetention ? { cacheRetention: entry.cacheRetention } : {}),
          ...(payload ? { payload } : {}),
        },
        {
          maxRetries: config.chat.maxRetries,
          stallMs: config.chat.stallTimeoutSeconds * 1000,
          // `attempt` counts retries; the user sees attempts, the first one included.
          onRetry: (attempt, delayMs, err) => progress(`Retrying in ${seconds(delayMs)} s (attempt ${attempt + 1} of ${config.chat.maxRetries + 1}): ${errorMessage(err)}`),
        },
      );
      for await (const ev of stream) handle(ev);
    } catch (e) {
      failure = e;
    }

    // Keep whatever arrived, even when stopped mid-stream; calls that never completed are dropped.
    const complete = parts.filter((p) => p.type !== 'toolCall' || calls.some((c) => c.id === p.id));
    if (complete.length) remember({ role: 'assistant', parts: complete, ...(failure ? { interrupted: true } : {}) });
    const used = failure ? undefined : contextWindow.afterStep(stepUsage, JSON.stringify(complete).length);
    if (stepUsage) reportUsage(chat, entry, stepUsage, deps, used);

    if (failure) {
      if (signal.aborted) return cancelled;
      // A request too long for the model: pruned or compacted, it is sent again (a bounded number of times).
      const recovered = complete.length ? undefined : await contextWindow.recover(failure, images);
      if (recovered === true && !signal.aborted) {
        step--;
        continue;
      }
      if (signal.aborted) return cancelled;
      if (contextWindow.hookStop) return hookStopped(contextWindow.hookStop);
      log.warn(`chat ${chat.id}: ${errorMessage(failure)}`);
      return fail(`Error from ${entry.id}: ${recovered ?? errorMessage(failure)}`);
    }
    // The assistant message just stored: its calls' file checkpoints name it.
    const messageSeq = lastSeq;
    const toolCalls = parts.filter((p): p is Extract<AssistantPart, { type: 'toolCall' }> => p.type === 'toolCall');
    if (!toolCalls.length) return { stopReason: stopReasonOf(finish) };

    // A tool hook's `continue: false` ends the turn after its call: the calls not started yet are not run.
    let hookStop: HookStop | undefined;
    // The folders a call is contained in: the workspace's, then `insideWorkspace` (../tool-calls/inside-workspace.ts).
    const callRoots = () => toolRoots(deps.roots(), deps.config().toolCall.approval.insideWorkspace, deps.homeDir);
    const runCall = async (call: (typeof toolCalls)[number]) => {
      if (hookStop) return;
      const tool = toolOf(call.name);
      // Folders this tool may use as if inside the workspace (durable memory's), after the roots.
      const trusted = tool ? (deps.trustedFolders?.(tool) ?? []) : [];
      const roots = trusted.length ? () => [...callRoots(), ...trusted] : callRoots;
      const tc = new ToolCall(call.id, call.name, tool, call.args, {
        chatId: chat.id,
        agent,
        approval,
        sessionApproved: chat.sessionApproved,
        sessionRejected: chat.sessionRejected,
        store,
        events,
        remember,
        messageSeq,
        ctx: {
          signal,
          roots: roots(),
          chatId: chat.id,
          editor: deps.editor,
          progress,
          ...(deps.sandbox ? { sandbox: () => deps.sandbox!(callRoots()) } : {}),
        },
        askUser: (id) => (deps.frontEnd?.canAsk === false ? Promise.resolve({ approved: false, reason: 'denied' }) : chat.approvals.ask(id, signal)),
        showDiffs: deps.frontEnd?.canShowDiffs !== false,
        trusted: () => chat.trust,
        stopGraceMs: deps.stopGraceMs,
        roots,
        ...(deps.hooks ? { hooks: { hooks: deps.hooks, chat: { ...hookChat(chat, deps), model: entry.id } } } : {}),
      });
      await tc.run();
      hookStop ??= tc.hookStop;
      // A tool's images reach only a model that reads images; the user is told when they do not.
      const result = entry.imageInput ? undefined : chat.stored.findLast((m) => m.role === 'tool' && m.toolCallId === call.id);
      const images = result?.role === 'tool' ? toolImages(result.outputs).length : 0;
      if (images) emit({ type: 'notice', text: noVisionText(entry, `The ${images === 1 ? 'image' : `${images} images`} from ${call.name} ${images === 1 ? 'was' : 'were'}`) });
    };
    await runToolCalls(toolCalls, (call) => toolOf(call.name), runCall);
    // ECA docs/config/hooks.md "Stopping".
    if (hookStop) return hookStopped(hookStop);
  }
  return fail(`Stopped after ${maxSteps} model steps without a final answer.`);
}

/** The system prompt of a request of this chat, with every source's sections. */
export function chatSystemPrompt(
  chat: LiveChat,
  agent: Agent,
  model: string | undefined,
  tools: Tool[],
  deps: ChatDeps,
  pin?: { autoSync: boolean; notice(text: string, internal?: boolean): void; peek?: boolean },
): SystemPrompt & { sections: PromptSection[] } {
  const roots = deps.roots();
  const def = chat.subagent?.def;
  const approval = subagentApproval(deps.config().toolCall.approval, def);
  const sections = deps.promptSections({ chatId: chat.id, agent, model, roots, stored: chat.stored, tools, approval, ...(def ? { subagent: def.name } : {}) });
  // A subagent's prompt is its definition's, after the config's own instructions.
  const extra = [deps.config().systemPrompt, def?.systemPrompt].filter(Boolean).join('\n\n');
  const built = systemPrompt({ agent, roots, tools, extra, sections });
  if (!pin) return { ...built, sections };
  // The stable part stays the chat's first one (pinned-prompt.ts), so the provider's prompt cache keeps it.
  const signature = promptSignature({ agent, extra, roots, tools: tools.map((t) => `${t.server}__${t.name}`), sections });
  return { ...pinnedPrompt(chat, { agent, model }, built, signature, pin), sections };
}

/** The model's own reason for ending a step without tool calls. */
function stopReasonOf(finish: Extract<LlmEvent, { type: 'finish' }>['reason'] | undefined): StopReason {
  return finish === 'length' ? 'max_tokens' : finish === 'refusal' ? 'refusal' : 'end_turn';
}

function reportUsage(chat: LiveChat, entry: ModelEntry, u: StepUsage & { contextWindow?: number }, deps: ChatDeps, windowUse?: StepContext): void {
  const cost = chargeUsage(chat, entry, u, deps);
  deps.events.event(chat.id, {
    type: 'usage',
    // ECA shared.clj `usage-sumary`: the last request's tokens, not the chat's sum.
    contextTokens: u.inputTokens + u.outputTokens,
    stepInputTokens: u.inputTokens,
    stepOutputTokens: u.outputTokens,
    ...(cost !== undefined ? { stepCost: cost, chatCost: chat.usage.cost } : {}),
    ...windowLimit(entry, u.contextWindow),
    ...windowUse,
  });
}

/** The usage event's `limit`: the model's, with the context window the request really had when the client told it. */
function windowLimit(entry: ModelEntry, contextWindow: number | undefined): { limit?: { context: number; output: number } } {
  if (contextWindow === undefined || !(contextWindow > 0)) return entry.limit ? { limit: entry.limit } : {};
  return { limit: { context: contextWindow, output: entry.limit?.output ?? 0 } };
}

/** `2`, `0.5`, `12`: whole seconds once the wait is long enough for tenths not to matter. */
function seconds(ms: number): string {
  const s = ms / 1000;
  return s >= 10 ? String(Math.round(s)) : String(Math.round(s * 10) / 10);
}

export function formatCost(usd: number): string {
  return usd.toFixed(usd < 0.01 ? 6 : 2);
}

export function newId(): string {
  return randomUUID();
}
