/**
 * What a chat keeps: one StoredMessage per completed step. From these the LLM history
 * and the editor replay (`chat/open`) are both derived, so there is one source of truth.
 */
import type { AssistantPart, LlmMessage } from '../shapes/llm.js';
import type { ChatContent, Role } from '../protocol/eca/content.js';
import type { StoredMessage } from './stored-message.js';

export type { StoredMessage };

/** The LLM conversation: everything after the last summary (from `/compact`). */
export function toLlmMessages(stored: StoredMessage[]): LlmMessage[] {
  let start = 0;
  for (let i = stored.length - 1; i >= 0; i--) {
    const m = stored[i];
    if (m.role === 'system' && m.kind === 'summary') {
      start = i;
      break;
    }
  }
  const out: LlmMessage[] = [];
  const answered = new Set(stored.filter((m) => m.role === 'tool').map((m) => (m as { toolCallId: string }).toolCallId));
  for (const m of stored.slice(start)) {
    switch (m.role) {
      case 'user':
        out.push({ role: 'user', content: m.contextText ? `${m.text}\n\n${m.contextText}` : m.text });
        break;
      case 'assistant': {
        // A turn cut off mid tool call leaves calls without results; providers reject those.
        const parts = m.parts.filter((p) => p.type !== 'toolCall' || answered.has(p.id));
        if (parts.length) out.push({ role: 'assistant', content: parts });
        break;
      }
      case 'tool':
        out.push({ role: 'tool', toolCallId: m.toolCallId, name: `${m.server}__${m.name}`, content: m.llmText, error: m.error });
        break;
      case 'system':
        if (m.kind === 'summary') out.push({ role: 'user', content: `Summary of the conversation so far:\n${m.text}` });
        break;
    }
  }
  return out;
}

/** The `chat/contentReceived` stream an editor needs to redraw a stored chat. */
export function toReplay(stored: StoredMessage[]): Array<{ role: Role; content: ChatContent }> {
  const out: Array<{ role: Role; content: ChatContent }> = [];
  let reasonSeq = 0;
  for (const m of stored) {
    switch (m.role) {
      case 'user':
        out.push({ role: 'user', content: { type: 'text', text: m.text, ...(m.contentId ? { contentId: m.contentId } : {}) } });
        break;
      case 'assistant':
        for (const p of m.parts) {
          if (p.type === 'text') out.push({ role: 'assistant', content: { type: 'text', text: p.text } });
          else if (p.type === 'reasoning') {
            const id = `replay-reason-${reasonSeq++}`;
            out.push({ role: 'assistant', content: { type: 'reasonStarted', id } });
            if (p.text) out.push({ role: 'assistant', content: { type: 'reasonText', id, text: p.text } });
            out.push({ role: 'assistant', content: { type: 'reasonFinished', id, totalTimeMs: 0 } });
          }
        }
        break;
      case 'tool': {
        const base = { origin: m.origin, id: m.toolCallId, name: m.name, server: m.server, arguments: m.args, ...(m.details ? { details: m.details } : {}) };
        out.push({
          role: 'assistant',
          content:
            m.outcome === 'called'
              ? { type: 'toolCalled', ...base, error: m.error, outputs: m.outputs, totalTimeMs: m.totalTimeMs }
              : { type: 'toolCallRejected', ...base, reason: m.reason ?? 'user' },
        });
        break;
      }
      case 'system':
        out.push({ role: 'system', content: { type: 'text', text: m.kind === 'summary' ? `Conversation compacted:\n${m.text}` : m.text } });
        break;
    }
  }
  return out;
}
