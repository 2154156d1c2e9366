/**
 * Runs one subagent for a `spawn_agent` call (ECA tools/agent.clj `spawn-agent`): a child chat
 * named after the call (`subagent-<toolCallId>`, child-ids.ts), linked to its parent, that gets the task as its
 * prompt and runs one turn; its last answer is the call's result. Stopping the parent's turn (the
 * call's signal) stops the child. Each model step of the child is told to the parent's call.
 */
import type { SubagentDetails, ToolContext, ToolResult } from '../../shapes/tool.js';
import { textResult } from '../../shapes/tool.js';
import type { TurnOutcome } from '../events.js';
import type { StoredMessage } from '../chat/stored-message.js';
import type { SubagentDef } from './definitions.js';

/** The most of a child's answer the parent's model reads (the rest is cut, and it is told so). */
export const SUBAGENT_RESULT_MAX_CHARS = 40_000;

/** A child chat being started (core/chat/chats.ts `startSubagent`). */
export interface ChildSpec {
  id: string;
  parentId: string;
  def: SubagentDef;
  /** The model the call asked for, else the definition's; the parent's when neither. */
  model?: string;
  variant?: string;
  task: string;
  /** The child's model step `step` (from 1) begins. */
  onStep(step: number): void;
}

/** What the runner needs of the chats. */
export interface ChildChats {
  /** A chat of that id is known (running, or stored). */
  hasChat(chatId: string): boolean;
  /** Starts the child's turn; `model` is the one it resolved to. An error text when it cannot start. */
  startSubagent(spec: ChildSpec): { model: string; done: Promise<TurnOutcome> } | { error: string };
  stop(chatId: string): void;
  messages(chatId: string): StoredMessage[];
}

export async function runSubagent(
  def: SubagentDef,
  call: { task: string; activity?: string; model?: string; variant?: string; /** The child chat's id (child-ids.ts). */ chatId: string },
  ctx: ToolContext,
  chats: ChildChats,
): Promise<ToolResult> {
  const parentId = ctx.chatId;
  const id = call.chatId;
  // As ECA: the step limit is said in the task, so the child keeps its answer for the end.
  const task = def.maxSteps
    ? `${call.task}\n\nIMPORTANT: You have at most ${def.maxSteps} steps for this task. Work efficiently and give a clear summary of what you found before you reach the limit.`
    : call.task;
  let model = '';
  const details = (step: number): SubagentDetails => ({
    type: 'subagent',
    subagentChatId: id,
    model,
    ...(call.variant ? { variant: call.variant } : {}),
    agentName: def.name,
    ...(def.maxSteps ? { maxSteps: def.maxSteps } : {}),
    step,
  });
  const started = chats.startSubagent({ id, parentId, def, model: call.model, variant: call.variant, task, onStep: (step) => ctx.setDetails?.(details(step)) });
  if ('error' in started) return textResult(started.error, true);
  model = started.model;
  const onAbort = () => chats.stop(id);
  if (ctx.signal.aborted) onAbort();
  else ctx.signal.addEventListener('abort', onAbort, { once: true });
  let outcome: TurnOutcome;
  try {
    outcome = await started.done;
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
  const answer = finalText(chats.messages(id));
  if (ctx.signal.aborted || outcome.stopReason === 'cancelled') return textResult(`Agent '${def.name}' was stopped because the parent chat was stopped.`, true);
  if (outcome.stopReason === 'error') {
    const halted = def.maxSteps && outcome.error?.startsWith('Stopped after');
    const head = halted
      ? `## Agent '${def.name}' Halted\n\nIt reached its limit of ${def.maxSteps} steps; the result below may be incomplete.`
      : `## Agent '${def.name}' Failed\n\n${outcome.error ?? 'The subagent failed.'}`;
    return textResult(`${head}${answer ? `\n\n## Partial result\n\n${capped(answer)}` : ''}`, true);
  }
  return textResult(`## Agent '${def.name}' Result\n\n${answer ? capped(answer) : 'Agent completed without producing output.'}`);
}

/** The text of the child's last assistant message that has any. */
function finalText(messages: StoredMessage[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role !== 'assistant') continue;
    const text = m.parts
      .flatMap((p) => (p.type === 'text' ? [p.text] : []))
      .join('\n')
      .trim();
    if (text) return text;
  }
  return undefined;
}

function capped(text: string): string {
  if (text.length <= SUBAGENT_RESULT_MAX_CHARS) return text;
  return `${text.slice(0, SUBAGENT_RESULT_MAX_CHARS)}\n\n[The answer was cut at ${SUBAGENT_RESULT_MAX_CHARS} of its ${text.length} characters.]`;
}
