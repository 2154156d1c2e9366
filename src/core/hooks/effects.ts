/**
 * What hook answers mean, event by event (ECA docs/config/hooks.md "Common rules" and each hook's
 * "Honored output"; eca chat/lifecycle.clj, chat.clj `run-pre-request-hooks!`, chat/tool_calls.clj).
 * Pure functions over the runs of one event.
 */
import type { HookType } from '../../config/hooks.js';
import type { HookRun } from './hooks.js';

const INTERVENE = 2;

/** A successful `continue: false`: the hook that stopped the turn and its user-only reason. */
export interface HookStop {
  name: string;
  reason?: string;
}

export function stopOf(runs: HookRun[]): HookStop | undefined {
  const run = runs.find((r) => r.exit === 0 && r.parsed?.continue === false);
  if (!run) return undefined;
  const reason = text(run.parsed?.stopReason);
  return { name: run.name, ...(reason ? { reason } : {}) };
}

/** ECA lifecycle.clj `turn-stopped-by-hook-message`. */
export function stoppedText(stop: HookStop): string {
  return stop.reason ? `Turn stopped by hook '${stop.name}': ${stop.reason}` : `Turn stopped by hook '${stop.name}'.`;
}

/** ECA lifecycle.clj `request-blocked-by-hook-message`. */
export function blockedText(name: string, reason: string): string {
  return reason ? `Request blocked by hook '${name}': ${reason}` : `Request blocked by hook '${name}'.`;
}

/** Each successful hook's `additionalContext`, in order. */
export function additionalContexts(runs: HookRun[]): string[] {
  return runs.flatMap((r) => (r.exit === 0 && text(r.parsed?.additionalContext) ? [text(r.parsed?.additionalContext)!] : []));
}

/** ECA lifecycle.clj `wrap-additional-context`. */
export function wrapContext(content: string): string {
  return `<additionalContext>\n${content}\n</additionalContext>`;
}

/** preToolCall's verdict (ECA tool_calls.clj `process-pre-tool-call-hook-result` and the plan after it). */
export interface PreToolVerdict {
  /** The arguments with every `updatedInput` merged in (later keys win); undefined when none changed them. */
  args?: Record<string, unknown>;
  /** A hook rejected the call (exit 2: stderr; `approval: "deny"`: its additionalContext): the LLM reads this. */
  rejected?: string;
  /** A hook asked for the user to be asked (it never loosens the config's answer). */
  ask: boolean;
  stop?: HookStop;
}

export function preToolVerdict(runs: HookRun[], args: Record<string, unknown>): PreToolVerdict {
  let merged: Record<string, unknown> | undefined;
  let rejected: string | undefined;
  let ask = false;
  for (const r of runs) {
    if (r.exit === INTERVENE) rejected ??= r.stderr.trim() || 'Tool call rejected by hook';
    if (r.exit !== 0) continue;
    const updated = r.parsed?.updatedInput;
    if (updated && typeof updated === 'object' && !Array.isArray(updated)) merged = { ...(merged ?? args), ...(updated as Record<string, unknown>) };
    if (r.parsed?.approval === 'deny') rejected ??= text(r.parsed.additionalContext) ?? 'Tool call rejected by hook';
    if (r.parsed?.approval === 'ask') ask = true;
  }
  const stop = stopOf(runs);
  return { ...(merged ? { args: merged } : {}), ...(rejected ? { rejected } : {}), ask, ...(stop ? { stop } : {}) };
}

/**
 * postToolCall's verdict: the result text the LLM reads instead (exit 2: stderr; `replacedOutput`)
 * and context appended to it (ECA tool_calls.clj `run-post-tool-call-hooks!`).
 */
export function postToolVerdict(runs: HookRun[]): { replaced?: string; context: string[]; stop?: HookStop } {
  let replaced: string | undefined;
  const context: string[] = [];
  for (const r of runs) {
    if (r.exit === INTERVENE) replaced = r.stderr.trim() || '[Tool output hidden by hook]';
    if (r.exit !== 0) continue;
    if (typeof r.parsed?.replacedOutput === 'string') replaced = r.parsed.replacedOutput;
    const c = text(r.parsed?.additionalContext);
    if (c) context.push(c);
  }
  const stop = stopOf(runs);
  return { ...(replaced !== undefined ? { replaced } : {}), context, ...(stop ? { stop } : {}) };
}

/** postRequest's follow-up (ECA lifecycle.clj `run-post-request-hooks!`): exit 2's stderr counts as one. */
export function followUpOf(runs: HookRun[]): string | undefined {
  const parts = runs.flatMap((r) => {
    const t = r.exit === 0 ? text(r.parsed?.followUp) : r.exit === INTERVENE ? text(r.stderr) : undefined;
    return t ? [t] : [];
  });
  return parts.length ? parts.join('\n\n') : undefined;
}

/**
 * The text of a hook's block (ECA lifecycle.clj `format-hook-output`): "Hook executed" and the
 * effects it had, or its plain-text output.
 */
export function blockText(type: HookType, parsed: Record<string, unknown> | undefined, stdout: string): string | undefined {
  if (!parsed) return stdout.trim() ? stdout : undefined;
  let out = 'Hook executed';
  const replacedPrompt = text(parsed.replacedPrompt);
  const followUp = text(parsed.followUp);
  const context = text(parsed.additionalContext);
  if (type === 'preRequest' && replacedPrompt) out += `\nReplacedPrompt: ${JSON.stringify(replacedPrompt)}`;
  if (type === 'preToolCall' && parsed.updatedInput !== undefined && parsed.updatedInput !== null) out += `\nUpdatedInput: ${JSON.stringify(parsed.updatedInput)}`;
  if ((type === 'postRequest' || type === 'subagentPostRequest') && followUp) out += `\nFollowUp: ${followUp}`;
  if (type === 'postToolCall' && typeof parsed.replacedOutput === 'string') out += `\nReplacedOutput: ${JSON.stringify(parsed.replacedOutput)}`;
  if (context) out += `\nAdditionalContext: ${context}`;
  return out;
}

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() ? v : undefined;
}
