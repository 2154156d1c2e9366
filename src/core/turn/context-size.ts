/**
 * Context-window arithmetic, pure: token estimates, the auto-compaction trigger, pruning old
 * tool results from what is sent, and the breakdown `usage` reports. Estimates count ~4
 * characters a token, as ECA does (shared.clj `estimate-tokens`): each provider tokenises
 * differently, and a provider's own count wins wherever it reports one.
 */
import type { LlmMessage, LlmToolSpec } from '../../shapes/llm.js';
import type { PromptSection } from './prompt-sections.js';

/** What a pruned tool result says instead of its output. */
export const PRUNED_MARKER = '[output pruned]';

/** How many of the latest model steps keep their tool results whole when pruning. */
export const KEEP_STEPS = 2;

export function textTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

function messageTokens(m: LlmMessage): number {
  return textTokens(typeof m.content === 'string' ? m.content : JSON.stringify(m.content));
}

export function estimateTokens(messages: LlmMessage[]): number {
  return messages.reduce((n, m) => n + messageTokens(m), 0);
}

/**
 * Whether a step that used `usedTokens` of a `contextLimit` window reached `percentage` (ECA
 * lifecycle.clj `auto-compact?`): never without a known, positive window or with the feature off.
 */
export function reachedThreshold(usedTokens: number, contextLimit: number | undefined, percentage: number | null | undefined): boolean {
  if (percentage === null || percentage === undefined || percentage <= 0) return false;
  if (contextLimit === undefined || !(contextLimit > 0)) return false;
  return (usedTokens / contextLimit) * 100 >= percentage;
}

/**
 * The index of the assistant message that starts the latest `keepSteps` model steps: the tool
 * results before it belong to older steps. -1 when there are not that many steps.
 */
export function pruneCut(messages: LlmMessage[], keepSteps = KEEP_STEPS): number {
  let steps = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === 'assistant' && ++steps === keepSteps) return i;
  }
  return -1;
}

/**
 * `messages` with the output of every tool result before `cut` (by default, older than the latest
 * `keepSteps` model steps) replaced by PRUNED_MARKER (its images dropped too). The model still sees
 * which tools ran with which arguments; only the bulk goes. Returns the same array when nothing
 * was pruned. A chat that keeps pruning passes the `cut` it chose when the provider overflowed,
 * so that what was sent whole stays whole and the provider's prompt cache keeps matching.
 */
export function pruneToolResults(messages: LlmMessage[], keepSteps = KEEP_STEPS, cut = pruneCut(messages, keepSteps)): LlmMessage[] {
  if (cut < 0) return messages;
  let pruned = false;
  const out = messages.map((m, i) => {
    if (i >= cut || m.role !== 'tool' || (m.content.length <= PRUNED_MARKER.length && !m.images?.length)) return m;
    pruned = true;
    return { role: 'tool' as const, toolCallId: m.toolCallId, name: m.name, content: PRUNED_MARKER, error: m.error };
  });
  return pruned ? out : messages;
}

export interface ContextCategory {
  name: string;
  tokens: number;
}

export interface ContextBreakdown {
  categories: ContextCategory[];
  usedTokens: number;
  contextLimit?: number;
}

/**
 * The share of the system prompt a section counts under, as ECA splits its own by its section
 * headers (shared.clj `system-prompt-section-headers`): project instructions (AGENTS.md and its
 * kin, runtime/instructions.ts) are "AGENTS.md", rules "Rules", the skills catalog "Skills";
 * everything else stays "System prompt".
 */
function sectionCategory(id: string): string {
  if (id.startsWith('instructions:')) return 'AGENTS.md';
  if (id === 'rules' || id.startsWith('rules:')) return 'Rules';
  if (id === 'skills' || id.startsWith('skills:')) return 'Skills';
  return 'System prompt';
}

/** ECA's order of the system prompt's categories (shared.clj `system-prompt-category-order`). */
const SYSTEM_CATEGORIES = ['System prompt', 'Rules', 'Skills', 'AGENTS.md'];

function systemCategories(system: string, sections: readonly PromptSection[]): ContextCategory[] {
  const tokens = new Map<string, number>();
  let own = textTokens(system);
  for (const s of sections) {
    const name = sectionCategory(s.id);
    if (name === 'System prompt') continue;
    const n = textTokens(s.text.trim());
    tokens.set(name, (tokens.get(name) ?? 0) + n);
    own -= n;
  }
  tokens.set('System prompt', Math.max(0, own));
  return SYSTEM_CATEGORIES.map((name) => ({ name, tokens: tokens.get(name) ?? 0 }));
}

/**
 * How a request fills the context window (ECA shared.clj `context-breakdown`): estimated per
 * category, then scaled so the categories sum to the provider's count when it reported one. The
 * system prompt's `sections` (prompt-sections.ts) are told apart as ECA does.
 */
export function contextBreakdown(
  req: { system: string; sections?: readonly PromptSection[]; tools: LlmToolSpec[]; messages: LlmMessage[] },
  reported: number | undefined,
  contextLimit: number | undefined,
): ContextBreakdown {
  let toolCalls = 0;
  let conversation = 0;
  for (const m of req.messages) {
    if (m.role === 'tool') toolCalls += messageTokens(m);
    else if (m.role === 'assistant') {
      for (const p of m.content) {
        // A text part's own id (ACP's messageId) never reaches the model: only its text counts.
        const n = textTokens(JSON.stringify(p.type === 'text' ? { type: p.type, text: p.text } : p));
        if (p.type === 'toolCall') toolCalls += n;
        else conversation += n;
      }
    } else conversation += messageTokens(m);
  }
  const raw: ContextCategory[] = [
    ...systemCategories(req.system, req.sections ?? []),
    { name: 'Tool definitions', tokens: req.tools.length ? textTokens(JSON.stringify(req.tools)) : 0 },
    { name: 'Tool calls', tokens: toolCalls },
    { name: 'Conversation', tokens: conversation },
  ].filter((c) => c.tokens > 0);
  const estimated = raw.reduce((n, c) => n + c.tokens, 0);
  const used = reported !== undefined && reported > 0 ? reported : estimated;
  const scale = estimated > 0 ? used / estimated : 1;
  return {
    categories: raw.map((c) => ({ name: c.name, tokens: Math.round(c.tokens * scale) })),
    usedTokens: used,
    ...(contextLimit !== undefined && contextLimit > 0 ? { contextLimit } : {}),
  };
}
