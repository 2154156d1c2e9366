/**
 * The `ask_user` tool over ACP: a form elicitation (`elicitation/create`, mode `form`, ACP
 * elicitation.mdx) with one field, `answer`. Offered only to clients that declare
 * `elicitation.form`. Options become a choice (`oneOf`) when the user must pick one, and a hint in
 * the field's description when they may type their own answer.
 */
import { methods, type AgentContext, type ClientCapabilities, type CreateElicitationRequest, type ElicitationPropertySchema } from '@agentclientprotocol/sdk';
import type { AskQuestion, AskUser } from '../../shapes/ask.js';
import { underDeadline } from '../../util/deadline.js';

/** As ECA's `chat/askQuestion` (../eca/eca-ask.ts): long, since a user may step away. */
const ASK_TIMEOUT_MS = 60 * 60_000;

export function acpAsk(caps: ClientCapabilities, client: () => AgentContext, place: (chatId: string, toolCallId?: string) => { sessionId: string; toolCallId?: string }): AskUser | undefined {
  if (!caps.elicitation?.form) return undefined;
  return async (chatId, q, signal) => {
    const { sessionId, toolCallId } = place(chatId, q.toolCallId);
    const params: CreateElicitationRequest = {
      mode: 'form',
      sessionId,
      ...(toolCallId ? { toolCallId } : {}),
      message: q.question,
      requestedSchema: { type: 'object', properties: { answer: answerField(q) }, required: ['answer'] },
    };
    const r = await underDeadline(ASK_TIMEOUT_MS, [signal], (cancellationSignal) => client().request(methods.client.elicitation.create, params, { cancellationSignal, stopWaitingOnCancel: true }));
    const answer = r.action === 'accept' && 'content' in r ? (r.content as Record<string, unknown> | null | undefined)?.answer : undefined;
    return typeof answer === 'string' && answer !== '' ? { answered: true, answer } : { answered: false };
  };
}

function answerField(q: AskQuestion): ElicitationPropertySchema {
  const options = q.options ?? [];
  if (options.length && !q.allowFreeform) {
    return { type: 'string', title: 'Answer', oneOf: options.map((o) => ({ const: o.label, title: o.label, ...(o.description ? { description: o.description } : {}) })) };
  }
  const hint = options.length ? `For example: ${options.map((o) => o.label).join(', ')}` : undefined;
  return { type: 'string', title: 'Answer', ...(hint ? { description: hint } : {}) };
}
