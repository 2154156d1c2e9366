/**
 * What a chat keeps: one StoredMessage per completed step. From these the LLM history
 * and the editor replay (`chat/open`) are both derived, so there is one source of truth.
 */
import type { LlmImage, LlmMessage } from '../../shapes/llm.js';
import type { ToolOutput } from '../../shapes/tool.js';
import { imageProblem, modelMediaType } from '../context/images.js';
import type { ChatEvent } from '../events.js';
import { answerOf, finishedCall, preparedCall } from './replay-calls.js';
import type { StoredMessage } from './stored-message.js';

export type { StoredMessage };

/** What the editor shows where a chat was compacted, when it opens the chat (ECA's texts). */
export const COMPACT_MARKER = '── Chat compacted ──';
export const COMPACT_MARKER_AUTO = '── Chat auto-compacted ──';
/** How a summary starts when the editor replays it. */
const REPLAY_SUMMARY_HEAD = 'The conversation was compacted/summarized, consider this summary:';

/** How a summary starts for the model. */
export const SUMMARY_HEAD = 'Summary of the conversation so far:';

/**
 * The messages the model reads: the last summary (from `/compact` or auto-compaction), then the
 * messages it kept verbatim (stored just before it), then everything after it; without a summary,
 * all of them. The store keeps the whole history; only what is sent shrinks. Images (attached to
 * user messages, returned by tools) go along only when the model reads them (`images`).
 */
export function toLlmMessages(stored: StoredMessage[], opts: { images?: boolean } = {}): LlmMessage[] {
  return llmMessagesOf(sentMessages(stored), opts);
}

/** The stored messages the model reads, in the order it reads them (see toLlmMessages). */
export function sentMessages(stored: StoredMessage[]): StoredMessage[] {
  for (let i = stored.length - 1; i >= 0; i--) {
    const m = stored[i];
    if (m.role === 'system' && m.kind === 'summary') {
      const kept = Math.min(m.kept ?? 0, i);
      return [m, ...stored.slice(i - kept, i), ...stored.slice(i + 1)];
    }
  }
  return stored;
}

function llmMessagesOf(sent: StoredMessage[], opts: { images?: boolean }): LlmMessage[] {
  const out: LlmMessage[] = [];
  const answered = new Set(sent.filter((m) => m.role === 'tool').map((m) => (m as { toolCallId: string }).toolCallId));
  for (const m of inCallOrder(sent)) {
    switch (m.role) {
      case 'user': {
        const content = m.contextText ? `${m.text}\n\n${m.contextText}` : m.text;
        out.push({ role: 'user', content, ...(opts.images && m.images?.length ? { images: m.images } : {}) });
        break;
      }
      case 'assistant': {
        // A turn cut off mid tool call leaves calls without results; providers reject those.
        const parts = m.parts.filter((p) => p.type !== 'toolCall' || answered.has(p.id));
        if (parts.length) out.push({ role: 'assistant', content: parts });
        break;
      }
      case 'tool': {
        const images = opts.images ? toolImages(m.outputs) : [];
        out.push({ role: 'tool', toolCallId: m.toolCallId, name: `${m.server}__${m.name}`, content: m.llmText, error: m.error, ...(images.length ? { images } : {}) });
        break;
      }
      case 'system':
        if (m.kind === 'summary') out.push({ role: 'user', content: `${SUMMARY_HEAD}\n${m.text}` });
        break;
      case 'flag':
        // A bookmark for the user only: the model never reads it.
        break;
    }
  }
  return out;
}

/**
 * The messages with each run of tool results in the order the assistant made the calls: calls
 * that ran in parallel (subagents) are stored as they finished, but the model reads them in order.
 */
function inCallOrder(stored: StoredMessage[]): StoredMessage[] {
  const out = [...stored];
  let order = new Map<string, number>();
  for (let i = 0; i < out.length; i++) {
    const m = out[i];
    if (m.role === 'assistant') order = new Map(m.parts.flatMap((p, at) => (p.type === 'toolCall' ? [[p.id, at] as const] : [])));
    if (m.role !== 'tool') continue;
    let end = i;
    while (end < out.length && out[end].role === 'tool') end++;
    const rank = (x: StoredMessage) => (x.role === 'tool' ? (order.get(x.toolCallId) ?? Number.MAX_SAFE_INTEGER) : 0);
    const run = out.slice(i, end).sort((a, b) => rank(a) - rank(b));
    out.splice(i, run.length, ...run);
    i = end - 1;
  }
  return out;
}

/**
 * The images among a tool's outputs that the LLM can take (png, jpeg, gif or webp, valid base64,
 * within the size limit): a bad one would have the provider refuse the chat's every later request.
 * New results are checked when the tool returns (../tool-calls/tool-images.ts); this also keeps out bad images
 * stored before that check existed.
 */
export function toolImages(outputs: ToolOutput[]): LlmImage[] {
  return outputs.flatMap((o) => {
    if (o.type !== 'image' || imageProblem(o.mimeType, o.data)) return [];
    return [{ mediaType: modelMediaType(o.mimeType)!, base64: o.data.replace(/\s+/g, '') }];
  });
}

/**
 * The events that redraw a stored chat (`chat/open`): what a live turn showed, in order.
 * `reasonSeqStart` is how many reasoning parts come before `stored` in its chat, so a page of
 * history (`chat/history`) names its reasoning as the whole chat's replay does.
 */
export function replayEvents(stored: StoredMessage[], reasonSeqStart = 0): ChatEvent[] {
  const out: ChatEvent[] = [];
  let reasonSeq = reasonSeqStart;
  // Calls whose `preparing` was sent (at their assistant message): a page that starts at a
  // call's result prepares it there, so the editor has a card to update.
  const prepared = new Set<string>();
  for (const [at, m] of stored.entries()) {
    switch (m.role) {
      case 'user':
        out.push({ type: 'userMessage', text: m.text, ...(m.contentId ? { id: m.contentId } : {}) });
        for (const img of m.images ?? []) out.push({ type: 'userImage', ...img });
        break;
      case 'assistant':
        for (const p of m.parts) {
          if (p.type === 'text') out.push({ type: 'assistantText', text: p.text, ...(p.id ? { id: p.id } : {}) });
          else if (p.type === 'reasoning') {
            // Its stored id when it has one; else (stored before ids were) the n-th replay id.
            const n = reasonSeq++;
            const id = p.id ?? replayReasonId(n);
            out.push({ type: 'reasoningStarted', id });
            if (p.text) out.push({ type: 'reasoningDelta', id, text: p.text });
            out.push({ type: 'reasoningFinished', id, totalTimeMs: 0 });
          } else {
            // Prepared where the model made it, as live; a call cut off before its result (never run) is not shown.
            const answer = answerOf(stored, at, p.id);
            if (answer && !prepared.has(p.id)) {
              prepared.add(p.id);
              out.push(preparedCall(answer));
            }
          }
        }
        break;
      case 'tool':
        if (!prepared.has(m.toolCallId)) out.push(preparedCall(m));
        // Done with: a later call that reused this id (stored before ids were made unique) is prepared anew.
        prepared.delete(m.toolCallId);
        out.push(...finishedCall(m));
        break;
      case 'system':
        if (m.kind === 'summary') {
          // ECA chat.clj `message->contents`: its compact_marker shows as this system text, and
          // the summary after it (shared.clj `compact-side-effect!`) as a user message.
          out.push({ type: 'notice', text: m.auto ? COMPACT_MARKER_AUTO : COMPACT_MARKER });
          out.push({ type: 'userMessage', text: `${REPLAY_SUMMARY_HEAD}\n${m.text}` });
        } else out.push({ type: 'notice', text: m.text });
        break;
      case 'flag':
        out.push({ type: 'flag', id: m.contentId, text: m.text });
        break;
    }
  }
  return out;
}

/** The id a replay gives the `n`th reasoning part of a chat (`chat/fork` finds reasoning by it). */
export function replayReasonId(n: number): string {
  return `replay-reason-${n}`;
}

/** How many reasoning parts the messages hold. */
export function countReasoning(stored: StoredMessage[]): number {
  return stored.reduce((n, m) => n + (m.role === 'assistant' ? m.parts.filter((p) => p.type === 'reasoning').length : 0), 0);
}
