/**
 * `completion/inline` and `rewrite/prompt` (ECA docs/protocol.md "Completion", "Rewrite"): ECA's
 * params to core's requests (core/assist/), core's answers and events to ECA's shapes, and its
 * local errors to JSON-RPC errors.
 */
import { ResponseError, type CancellationToken } from 'vscode-jsonrpc';
import { RequestCancelled, RequestFailed } from '../../rpc/errors.js';
import { AssistError } from '../../core/assist/index.js';
import type { Workspace } from '../../runtime/workspace.js';
import type { CompletionInlineParams, CompletionInlineResult, RewriteContentReceived, RewritePromptParams } from '../../protocol/eca/assist.js';

/**
 * One completion at the cursor; an empty answer is no item. A request a newer one replaced fails
 * −32800 (what ECA's JSON-RPC library answers a cancelled request; the plugins drop stale answers
 * by `docVersion` anyway), and so does one the editor cancelled with `$/cancelRequest`.
 */
export async function completeInline(s: Workspace, p: CompletionInlineParams, token?: CancellationToken): Promise<CompletionInlineResult> {
  const { line, character } = p.position;
  const cancelled = new AbortController();
  // Cancelled while it waited for the models: no call at all (a late listener would fire only after one began).
  if (token?.isCancellationRequested) cancelled.abort();
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
 * ECA answers a failed completion with an error object whose `type` (error, warning, info) sits
 * next to its message (completion.clj), and eca-emacs reads it there: eca-completion.el's
 * error-callback does `(plist-get error :type)` and shows nothing for any other shape. So the
 * type goes at the top level of the JSON-RPC error (and in `data` too, for clients that look
 * there). A superseded or cancelled request stays a plain −32800: nothing to show.
 */
function wireError(e: unknown): unknown {
  if (!(e instanceof AssistError)) return e;
  if (e.code === 'superseded' || e.code === 'cancelled') return new ResponseError(RequestCancelled, e.message);
  const type = e.code === 'noModel' ? 'error' : 'warning';
  return new TypedResponseError(RequestFailed, e.message, type);
}

/** A JSON-RPC error with ECA's top-level `type`: vscode-jsonrpc builds the reply from `toJson()`. */
class TypedResponseError extends ResponseError<{ type: string }> {
  constructor(
    code: number,
    message: string,
    readonly type: 'error' | 'warning' | 'info',
  ) {
    super(code, message, { type });
    // ResponseError's constructor pins its own prototype; put ours back so toJson below is used.
    Object.setPrototypeOf(this, TypedResponseError.prototype);
  }

  override toJson(): ReturnType<ResponseError<{ type: string }>['toJson']> & { type: string } {
    return { ...super.toJson(), type: this.type };
  }
}
