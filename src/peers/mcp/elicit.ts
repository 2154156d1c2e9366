/**
 * Answers an MCP server's form-mode `elicitation/create` by asking the user through the front end
 * (the same path as the `ask_user` tool: ECA `chat/askQuestion`), one question per field, in the
 * schema's order. https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation
 * ECA itself declares no elicitation capability; this follows the MCP spec and ECA's question shape.
 */
import { ErrorCode, McpError, type ElicitRequestFormParams, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { AskAnswer, AskQuestion } from '../../shapes/ask.js';
import { parseAnswer, parseForm, questionFor, type FieldValue } from './elicit-form.js';

/** Asks one question in the right chat; rejects when the question was withdrawn (stop, deletion). */
export type AskOne = (q: Omit<AskQuestion, 'toolCallId'>) => Promise<AskAnswer>;

/** A user who gives this many unusable answers to one field is taken to have given up. */
const ATTEMPTS = 3;

/**
 * The user dismissing any question cancels the whole form (spec: "cancel", dismissed without an
 * explicit choice). A bad schema is an InvalidParams error, never a question.
 */
export async function elicitForm(server: string, params: ElicitRequestFormParams, ask: AskOne): Promise<ElicitResult> {
  const form = parseForm(params.requestedSchema);
  if ('error' in form) throw new McpError(ErrorCode.InvalidParams, form.error);
  const { fields } = form;
  if (!fields.length) {
    // Nothing to fill in: the form is a confirmation.
    const a = await ask({ question: `MCP server ${server} asks: ${params.message}`, options: [{ label: 'Accept' }, { label: 'Decline' }], allowFreeform: false });
    if (!a.answered) return { action: 'cancel' };
    return /^accept$/i.test(a.answer.trim()) ? { action: 'accept', content: {} } : { action: 'decline' };
  }
  const content: Record<string, FieldValue> = {};
  for (const [i, f] of fields.entries()) {
    let retry: string | undefined;
    let done = false;
    for (let attempt = 0; attempt < ATTEMPTS && !done; attempt++) {
      const a = await ask(questionFor(server, params.message, f, i, fields.length, retry));
      if (!a.answered) return { action: 'cancel' };
      const parsed = parseAnswer(f, a.answer);
      if (!parsed.ok) {
        retry = parsed.error;
        continue;
      }
      if (parsed.value !== undefined) content[f.name] = parsed.value;
      done = true;
    }
    if (!done) return { action: 'cancel' };
  }
  return { action: 'accept', content };
}
