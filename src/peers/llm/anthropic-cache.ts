/**
 * Anthropic prompt caching: where a request's `cache_control` breakpoints go.
 * https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching
 *
 * The cached prefix runs tools → system → messages; a breakpoint caches everything up to and
 * including its block, a request may carry at most 4, and a prefix shorter than the model's
 * minimum (1024–4096 tokens) is simply not cached (no error). So, in that order:
 * 1. the last tool: the tool list is the same from one request of a chat to the next;
 * 2. the end of the stable system part (system-prompt.ts `stableLength`), so the dynamic rest
 *    (rules that depend on the files in play, hook context) changes nothing before it;
 * 3–4. the last block of the last two user turns: each request ends with a user turn, so the
 *    second-to-last one is where the previous request of the turn loop put its last breakpoint,
 *    and this request reads that whole prefix back while writing its own, one step longer.
 *
 * A top-level `cache_control` from the model's `extraPayload` (Anthropic's automatic caching) marks
 * the request's last block itself and takes one of the four slots: the last user turn is then left
 * to it, so the request never carries a fifth marker (which Anthropic refuses with a 400).
 *
 * `cacheRetention` follows ECA's provider key (docs/config/models.md): `short` (default, the
 * 5-minute cache), `long` (1 hour, only on Anthropic's own API as ECA does, since proxies reject
 * the ttl), and patchbay's `none`, which sends no breakpoint at all.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { CacheRetention } from '../../shapes/llm.js';

/** Anthropic refuses a request with more breakpoints than this. */
export const MAX_BREAKPOINTS = 4;

type Params = Anthropic.MessageCreateParamsStreaming;
type Marker = Anthropic.CacheControlEphemeral;

export function cacheMarker(retention: CacheRetention | undefined, url: string | undefined): Marker | undefined {
  if (retention === 'none') return undefined;
  const direct = !url || /(^|\/\/)api\.anthropic\.com(\/|:|$)/.test(url);
  return retention === 'long' && direct ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' };
}

/**
 * The system prompt as text blocks: the stable prefix (marked) and the dynamic rest. A blank
 * part is left out, since the API refuses empty text blocks.
 */
export function systemBlocks(system: string, stableLength: number | undefined, marker: Marker | undefined): Anthropic.TextBlockParam[] {
  const cut = Math.max(0, Math.min(system.length, stableLength ?? system.length));
  const stable = system.slice(0, cut);
  const dynamic = system.slice(cut);
  const blocks: Anthropic.TextBlockParam[] = [];
  if (stable.trim()) blocks.push({ type: 'text', text: stable, ...(marker ? { cache_control: marker } : {}) });
  if (dynamic.trim()) blocks.push({ type: 'text', text: dynamic });
  return blocks;
}

/**
 * Puts the breakpoints on a built request body (tools, system blocks, messages), at most
 * MAX_BREAKPOINTS with the `automatic` one (a payload's top-level `cache_control`) counted.
 */
export function placeBreakpoints(params: Params, marker: Marker | undefined, automatic = false): void {
  if (!marker) return;
  let left = automatic ? MAX_BREAKPOINTS - 1 : MAX_BREAKPOINTS;
  const tools = params.tools;
  if (tools?.length) {
    const last = tools[tools.length - 1] as Anthropic.Tool;
    tools[tools.length - 1] = { ...last, cache_control: marker };
    left--;
  }
  if (Array.isArray(params.system)) left -= params.system.filter((b) => b.cache_control).length;
  let marked = 0;
  // The automatic breakpoint sits on the last message's last block: ours would be a second one there.
  const from = automatic ? params.messages.length - 2 : params.messages.length - 1;
  for (let i = from; i >= 0 && left > 0 && marked < 2; i--) {
    const m = params.messages[i];
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') {
      if (!m.content) continue;
      m.content = [{ type: 'text', text: m.content, cache_control: marker }];
    } else {
      const last = m.content[m.content.length - 1];
      // Thinking blocks cannot carry a breakpoint; user turns hold none, so this only skips oddities.
      if (!last || last.type === 'thinking' || last.type === 'redacted_thinking') continue;
      m.content[m.content.length - 1] = { ...last, cache_control: marker } as Anthropic.ContentBlockParam;
    }
    marked++;
    left--;
  }
}
