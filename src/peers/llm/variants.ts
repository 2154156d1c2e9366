/**
 * The built-in variants ECA gives known reasoning models (eca `src/eca/config.clj`
 * `variantsByModel`, docs/config/variants.md), and a model's effective variants: the built-in
 * set whose pattern matches the model's name, with the config's `variants` over it; a variant
 * set to `{}` is removed (ECA `effective-model-variants`).
 */
import type { LlmApi } from '../../shapes/llm.js';

type Payload = Record<string, unknown>;
type Variants = Record<string, Payload>;

const effort = (levels: string[], payload: (level: string) => Payload): Variants => Object.fromEntries(levels.map((l) => [l, payload(l)]));

/** OpenAI responses models: `reasoning.effort`, with a reasoning summary except for `none`. */
const openAiReasoning = (levels: string[]): Variants => ({
  none: { reasoning: { effort: 'none' } },
  ...effort(levels, (l) => ({ reasoning: { effort: l, summary: 'auto' } })),
});

/** Anthropic adaptive thinking with an effort level. */
const anthropicEffort = (levels: string[], thinking: Payload): Variants => effort(levels, (l) => ({ output_config: { effort: l }, thinking }));

interface BuiltinSet {
  /** Matched anywhere in the model's name (its config key), as ECA's `re-find`. */
  pattern: RegExp;
  variants: Variants;
  /** Only for these wire APIs (absent: any). */
  apis?: LlmApi[];
  excludeProviders?: string[];
}

const ADAPTIVE_SUMMARIZED = { type: 'adaptive', display: 'summarized' };

/** In ECA's order: the first set whose pattern matches wins. */
const BUILTINS: BuiltinSet[] = [
  { pattern: /sonnet[-._]4[-._]6|opus[-._]4[-._][56]/, variants: anthropicEffort(['low', 'medium', 'high', 'max'], { type: 'adaptive' }), apis: ['anthropic'] },
  {
    pattern: /opus[-._]4[-._][78]|opus[-._]5|sonnet[-._]5|fable[-._]5|mythos[-._]5/,
    variants: { default: { thinking: ADAPTIVE_SUMMARIZED }, ...anthropicEffort(['low', 'medium', 'high', 'xhigh', 'max'], ADAPTIVE_SUMMARIZED) },
    apis: ['anthropic'],
  },
  { pattern: /gpt[-._]5(?:[-._](?:2|4|5)(?!\d)|[-._]3[-._]codex)/, variants: openAiReasoning(['low', 'medium', 'high', 'xhigh']), excludeProviders: ['github-copilot'] },
  { pattern: /gpt[-._]5[-._]6(?!\d)/, variants: openAiReasoning(['low', 'medium', 'high', 'xhigh', 'max']), excludeProviders: ['github-copilot'] },
  {
    pattern: /deepseek[-._]v4[-._](?:pro|flash)/,
    variants: { none: { thinking: { type: 'disabled' } }, high: { reasoning_effort: 'high' }, max: { reasoning_effort: 'max' } },
    apis: ['openai-chat'],
  },
  { pattern: /glm[-._]5[-._]2/i, variants: { none: { reasoning_effort: 'none' }, high: { reasoning_effort: 'high' }, max: { reasoning_effort: 'max' } } },
];

/**
 * The variants of model `name` (its config key) of `provider`: built-ins, then the config's
 * `variants` over them by name; `{}` removes one. Undefined when none are left.
 */
export function effectiveVariants(provider: string, api: LlmApi, name: string, user: Variants | undefined): Variants | undefined {
  const builtin = BUILTINS.find((b) => b.pattern.test(name) && !b.excludeProviders?.includes(provider) && (!b.apis || b.apis.includes(api)));
  const merged: Variants = { ...builtin?.variants, ...user };
  for (const [n, payload] of Object.entries(merged)) if (Object.keys(payload).length === 0) delete merged[n];
  return Object.keys(merged).length ? merged : undefined;
}
