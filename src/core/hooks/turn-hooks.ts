/**
 * The hooks around a prompt (ECA docs/config/hooks.md "Chat hooks", "Request hooks"; eca
 * chat.clj `run-start-hooks!`, `prompt-messages!`, chat/lifecycle.clj `run-post-request-hooks!`):
 * chatStart on a chat's first prompt here, preRequest before the model is asked, postRequest
 * after it answered, with its follow-up turns.
 */
import type { ModelEntry } from '../../shapes/llm.js';
import type { LiveChat } from '../chat/chat.js';
import type { ChatDeps } from '../deps.js';
import type { TurnOutcome } from '../events.js';
import { newId, rememberUserMessage, runTurn, stoppedByHook, type TurnInput, type UserMessageHandle } from '../turn/turn.js';
import { hookChat } from './hook-chat.js';
import { additionalContexts, blockedText, followUpOf, stopOf, stoppedText, wrapContext } from './effects.js';

/** Follow-ups in a row a postRequest hook may start before patchbay stops them (a hook ignoring `follow_up_active`). */
const MAX_FOLLOW_UPS = 10;
const started = new WeakSet<LiveChat>();

/** A prompt's turn with its hooks; without hooks, simply the turn. `user`: the prompt's stored message. */
export async function hookedTurn(chat: LiveChat, entry: ModelEntry, input: TurnInput, deps: ChatDeps, abort: AbortController, user: UserMessageHandle): Promise<TurnOutcome> {
  const hooks = deps.hooks;
  if (!hooks) return runTurn(chat, entry, input, deps, abort);
  const chatHook = hookChat(chat, deps);
  const notice = (text: string) => deps.events.event(chat.id, { type: 'notice', text });
  const signal = abort.signal;
  const ended: TurnOutcome = { stopReason: 'end_turn' };

  // A subagent's child chat has subagentStart and subagentPostRequest instead of chatStart and
  // postRequest (ECA chat.clj `run-start-hooks!`, lifecycle.clj `run-post-request-hooks!`).
  const parentChatId = chat.parentId;
  if (!started.has(chat)) {
    started.add(chat);
    // Resumed: the chat had messages before this prompt's.
    const runs = parentChatId
      ? await hooks.trigger('subagentStart', { chat: chatHook, data: { parentChatId }, signal })
      : await hooks.trigger('chatStart', { chat: chatHook, data: { resumed: chat.stored.length > 1 }, signal });
    const context = additionalContexts(runs);
    if (context.length) hooks.setChatContext(chat.id, context.join('\n\n'));
    const stop = stopOf(runs);
    if (stop) return (notice(stoppedText(stop)), ended);
  }

  // Each hook sees the prompt as the ones before it left it (ECA chains replacedPrompt).
  const data: { prompt: string } = { prompt: input.userText };
  let replaced = false;
  const pre = await hooks.trigger('preRequest', {
    chat: chatHook,
    data,
    signal,
    onRun: (r) => {
      const next = r.exit === 0 ? r.parsed?.replacedPrompt : undefined;
      if (typeof next === 'string' && next.trim()) ((data.prompt = next), (replaced = true));
    },
  });
  const blocker = pre.find((r) => r.exit === 2);
  const stop = stopOf(pre);
  if (blocker || stop) {
    // Blocked (exit 2): the prompt never enters the history; a visible hook's block already shows why.
    if (blocker) user.drop();
    if (stop) notice(stoppedText(stop));
    else if (blocker && !blocker.visible) notice(blockedText(blocker.name, blocker.stderr.trim()));
    return ended;
  }
  const contexts = additionalContexts(pre).map(wrapContext);
  if (replaced || contexts.length) {
    user.rewrite((m) => {
      if (replaced) m.text = data.prompt;
      if (contexts.length) m.contextText = [m.contextText, ...contexts].filter(Boolean).join('\n\n');
    });
  }

  let outcome = await runTurn(chat, entry, input, deps, abort);
  for (let n = 0; n < MAX_FOLLOW_UPS; n++) {
    if (outcome.stopReason !== 'end_turn' || signal.aborted || stoppedByHook(outcome)) return outcome;
    const data = { response: lastAnswer(chat), followUpActive: n > 0, ...(parentChatId ? { parentChatId } : {}) };
    const post = await hooks.trigger(parentChatId ? 'subagentPostRequest' : 'postRequest', { chat: chatHook, data, signal });
    const halt = stopOf(post);
    if (halt) return (notice(stoppedText(halt)), outcome);
    const followUp = followUpOf(post);
    if (!followUp || signal.aborted) return outcome;
    // ECA: the follow-up is a plain user message of a new turn.
    const id = newId();
    rememberUserMessage(chat, deps.store, followUp, id);
    deps.events.event(chat.id, { type: 'userMessage', text: followUp, id });
    outcome = await runTurn(chat, entry, { userText: followUp, contentId: id, userStored: true }, deps, abort);
  }
  return outcome;
}

/** The text of the last assistant message (postRequest's `response`). */
function lastAnswer(chat: LiveChat): string {
  const m = chat.stored.findLast((x) => x.role === 'assistant');
  return m?.role === 'assistant' ? m.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('') : '';
}
