/**
 * Which model inline completion uses and how it is asked. A completion has a few hundred output
 * tokens; a reasoning model spends them thinking and answers nothing (OpenAI counts reasoning
 * tokens in `max_output_tokens`). ECA's completion defaults to `openai/gpt-4.1` and sends
 * `:reason? false` (src/eca/features/completion.clj), so with no `completion.model` a reasoning
 * default model is swapped for a model of the same provider that does not reason, and a reasoning
 * model that stays is asked for the least reasoning its API accepts.
 */
import type { ModelEntry } from '../../shapes/llm.js';
import { mergePayload } from '../../util/merge-payload.js';

/** ECA's default completion model, preferred among a provider's models that do not reason. */
const ECA_COMPLETION_MODEL = 'gpt-4.1';

/**
 * OpenAI's models that reason unasked: GPT-5 (not its `-chat` models) and the o-series. Others
 * (Claude, GPT-4.x, most local models) think only when the request asks, which a completion never does.
 */
export function reasonsUnasked(entry: ModelEntry): boolean {
  if (entry.api !== 'openai-responses' && entry.api !== 'openai-chat') return false;
  const name = entry.modelName.replace(/^.*\//, '');
  return (/^gpt-5/.test(name) && !/-chat/.test(name)) || /^o\d/.test(name);
}

/** The default model, or a model of its provider that does not reason when it does (ECA's gpt-4.1 first). */
export function completionDefault(models: ModelEntry[], fallback: ModelEntry): ModelEntry {
  if (!reasonsUnasked(fallback)) return fallback;
  const calm = models.filter((m) => m.provider === fallback.provider && m.api !== 'local' && !reasonsUnasked(m));
  return calm.find((m) => m.modelName === ECA_COMPLETION_MODEL) ?? calm[0] ?? fallback;
}

/**
 * The request fields of a completion: the least reasoning a reasoning model takes (its `none`
 * variant when it has one, else GPT-5's `minimal`, the o-series' `low`), with the model's
 * `extraPayload` over them (the user's word wins).
 */
export function completionPayload(entry: ModelEntry): Record<string, unknown> | undefined {
  const least = reasonsUnasked(entry) ? leastReasoning(entry) : undefined;
  if (!least) return entry.extraPayload;
  return mergePayload(least, entry.extraPayload);
}

function leastReasoning(entry: ModelEntry): Record<string, unknown> {
  const none = entry.variants?.none;
  if (none) return none;
  const effort = /^o\d/.test(entry.modelName.replace(/^.*\//, '')) ? 'low' : 'minimal';
  return entry.api === 'openai-responses' ? { reasoning: { effort } } : { reasoning_effort: effort };
}
