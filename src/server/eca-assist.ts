/**
 * `completion/inline` and `rewrite/prompt` (ECA docs/protocol.md "Completion", "Rewrite"): ECA's
 * params to core's requests (core/assist/), core's answers and events to ECA's shapes, and its
 * local errors to JSON-RPC errors.
 */
import { ResponseError, type CancellationToken } from 'vscode-jsonrpc';
import { RequestCancelled, RequestFailed } from '../rpc/errors.js';
import { AssistError } from '../core/assist/index.js';
import type { Workspace } from '../runtime/workspace.js';
import type { CompletionInlineParams, CompletionInlineResult, RewriteContentReceived, RewritePromptParams } from '../protocol/eca/assist.js';

/**
 * One completion at the cursor; an empty answer is no item. A request a newer one replaced fails
 * −32800 (what ECA's JSON-RPC library answers a cancelled request; the plugins drop stale answers
 * by `docVersion` anyway), and so does one the editor cancelled with `$/cancelRequest`.
 */
export async function completeInline(s: Workspace, p: CompletionInlineParams, token?: CancellationToken): Promise<CompletionInlineResult> {
  const { line, character } = p.position;
  const cancelled = new AbortController();
  const sub = token?.onCancellationRequested(() => cancelled.abort());
  try {
    // ECA's completion positions are 1-based in both coordinates (completion.clj `insert-completion-tag`).
    const { text } = await s.completer.complete({ text: p.docText, line: Math.max(0, line - 1), character: Math.max(0, character - 1), ...(p.path ? { path: p.path } : {}) }, cancelled.signal);
    if (!text) return { items: [] };
    // The text is inserted at the cursor: an empty range there, as ECA's items have.
    return { items: [{ text, docVersion: p.docVersion, range: { start: { line, character }, end: { line, character } } }] };
  } catch (e) {
    throw wireError(e);
  } finally {
    sub?.dispose();
  }
}

/** Answers with the model at once; the rewrite streams as `rewrite/contentReceived` after the answer. */
export function startRewrite(s: Workspace, p: RewritePromptParams, send: (params: RewriteContentReceived) => void): { status: 'prompting'; model: string } {
  try {
    const range = { startLine: p.range.start.line, startCharacter: p.range.start.character, endLine: p.range.end.line, endCharacter: p.range.end.character };
    const { model } = s.rewriter.start({ text: p.text, prompt: p.prompt, range, ...(p.path ? { path: p.path } : {}) }, (content) => send({ rewriteId: p.id, content }));
    return { status: 'prompting', model };
  } catch (e) {
    throw wireError(e);
  }
}

/**
 * ECA answers a failed completion with an error of `type` warning and the provider's message
 * (completion.clj); JSON-RPC errors carry a code, so the type goes in `data`.
 */
function wireError(e: unknown): unknown {
  if (!(e instanceof AssistError)) return e;
  if (e.code === 'superseded' || e.code === 'cancelled') return new ResponseError(RequestCancelled, e.message);
  return new ResponseError(RequestFailed, e.message, { type: e.code === 'noModel' ? 'error' : 'warning' });
}
