/**
 * `ask_user`: the model asks the user a question and reads the answer (ECA
 * src/eca/features/tools/ask_user.clj: same name, arguments, defaults and replies). Offered only
 * when the front end can ask (shapes/ask.ts); read-only, so it needs no approval, as in ECA where
 * it is allowed by default.
 */
import { z } from 'zod';
import type { AskOption, AskUser } from '../../../shapes/ask.js';
import type { Tool } from '../../../shapes/tool.js';
import { textResult } from '../../../shapes/tool.js';
import { defineNativeTool } from '../../../shapes/define-tool.js';

const optionSchema = z.object({
  label: z.string().describe('Short label for the option.'),
  description: z.string().optional().describe('Brief explanation of what this option means.'),
});

export const askUserSchema = z.object({
  question: z
    .string()
    .refine((q) => q.trim() !== '', '`question` is required and must not be blank')
    .describe('The question to ask the user.'),
  // Models send options as plain strings, or as a JSON string, now and then: kept when usable, as ECA does.
  options: z.preprocess(normalizeOptions, z.array(optionSchema).optional()).describe('Optional predefined options for the user to choose from.'),
  allowFreeform: z.boolean().optional().describe('Whether the user can type a custom answer instead of selecting an option. Defaults to true.'),
});

const DESCRIPTION = `Ask the user a question to gather information, clarify ambiguity, understand preferences, or offer choices.

Use it to gather preferences or requirements, clarify ambiguous instructions, or get a decision on how to go on.
Do not use it for trivial decisions you can make yourself, when the answer is clear from context, or to confirm every small step.

Keep the question concise and specific, and ask one question at a time. Offer 2-4 options when applicable, each with a brief description; put the one you recommend first and add "(Recommended)" to its label.
Set \`allowFreeform\` to false when only the given options are valid; when it is true (the default) the user can type their own answer, so do not add an "Other" option.`;

export function askUserTool(ask: AskUser): Tool {
  return defineNativeTool({
    name: 'ask_user',
    description: DESCRIPTION,
    schema: askUserSchema,
    readOnly: true,
    mutates: false,
    pathArgs: [],
    summary: (a) => (a.question ? summarize(a.question) : 'Preparing question'),
    async run(args, ctx) {
      // What the chat is waiting on, said before asking as ECA does (eca-emacs shows it in place of "Calling tool").
      ctx.progress?.('Waiting answer');
      const answer = await ask(
        ctx.chatId,
        {
          question: args.question,
          ...(args.options?.length ? { options: args.options } : {}),
          allowFreeform: args.allowFreeform ?? true,
          ...(ctx.toolCallId ? { toolCallId: ctx.toolCallId } : {}),
        },
        ctx.signal,
      );
      return answer.answered ? textResult(`User answered: ${answer.answer}`) : textResult('User cancelled the question.', true);
    },
  });
}

/** `Q: <question>` on one line, cut to 50 characters (ECA's summary-fn). */
function summarize(question: string): string {
  const q = `Q: ${question.replace(/[\r\n]+/g, ' ')}`;
  return q.length > 50 ? `${q.slice(0, 47)}...` : q;
}

/** Options as `{label, description?}`, from objects, plain strings or a JSON-encoded array; undefined when none is usable. */
function normalizeOptions(raw: unknown): AskOption[] | undefined {
  let list = raw;
  if (typeof list === 'string') {
    try {
      list = JSON.parse(list);
    } catch {
      return undefined;
    }
  }
  if (!Array.isArray(list)) return undefined;
  const out = list.flatMap((o: unknown): AskOption[] => {
    if (typeof o === 'string') return o.trim() ? [{ label: o }] : [];
    if (!o || typeof o !== 'object') return [];
    const { label, description } = o as Record<string, unknown>;
    if (typeof label !== 'string' || !label.trim()) return [];
    return [{ label, ...(typeof description === 'string' && description.trim() ? { description } : {}) }];
  });
  return out.length ? out : undefined;
}
