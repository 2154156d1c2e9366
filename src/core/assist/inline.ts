/**
 * Inline completion: the text to insert at the cursor. A model configured with `fim` gets the
 * prefix and suffix on its API's fill-in-the-middle endpoint; any other model a chat request with
 * the document and a cursor tag. One completion at a time: an editor asks again on every
 * keystroke, so a newer request aborts the older one's LLM call and the older fails `superseded`.
 */
import type { LlmClient, ModelEntry } from '../../shapes/llm.js';
import { errorMessage } from '../../util/log.js';
import { AssistError, assistModel, type AssistDeps } from './deps.js';
import { COMPLETION_INSTRUCTIONS, CURSOR_TAG } from './prompts.js';
import { codeOf, splitAt } from './text.js';

/** As ECA (src/eca/features/completion.clj): a completion not back in 30 s is given up. */
const COMPLETION_TIMEOUT_MS = 30_000;
/** A completion is a few lines: the model is not let run on. */
const MAX_COMPLETION_TOKENS = 256;

export interface InlineRequest {
  /** The whole document. */
  text: string;
  /** The cursor, 0-based (LSP-style); a position past a line or the document is clamped to its end. */
  line: number;
  character: number;
  /** The document's path, for the model's context. */
  path?: string;
}

export class InlineCompleter {
  private current: AbortController | undefined;

  constructor(private readonly deps: AssistDeps) {}

  /**
   * The text to insert at the cursor ('' when the model has nothing). Throws AssistError. `cancel`
   * is the front end withdrawing the request.
   */
  async complete(req: InlineRequest, cancel?: AbortSignal): Promise<{ text: string; model: string }> {
    const entry = assistModel(this.deps, this.deps.config().completion.model, 'completion');
    this.current?.abort(new AssistError('superseded', 'Cancelled: a newer completion request replaced this one'));
    const ac = new AbortController();
    this.current = ac;
    const onCancel = (): void => ac.abort(new AssistError('cancelled', 'Cancelled by the editor'));
    if (cancel?.aborted) onCancel();
    cancel?.addEventListener('abort', onCancel, { once: true });
    const timer = setTimeout(() => ac.abort(new AssistError('timeout', 'Timeout waiting for completion')), COMPLETION_TIMEOUT_MS);
    try {
      const { prefix, suffix } = splitAt(req.text, req.line, req.character);
      const client = await this.deps.clientFor(entry);
      const text =
        entry.fim && client.fillInMiddle
          ? await client.fillInMiddle({ model: entry.modelName, prompt: prefix, suffix, maxOutputTokens: maxTokens(entry), signal: ac.signal, ...payload(entry) })
          : await this.chat(entry, client, prefix, suffix, req.path, ac.signal);
      return { text, model: entry.id };
    } catch (e) {
      if (ac.signal.aborted && ac.signal.reason instanceof AssistError) throw ac.signal.reason;
      throw new AssistError('llm', `Completion failed: ${errorMessage(e)}`);
    } finally {
      clearTimeout(timer);
      cancel?.removeEventListener('abort', onCancel);
      if (this.current === ac) this.current = undefined;
    }
  }

  /** Stops the completion under way (the workspace is closing). */
  dispose(): void {
    this.current?.abort(new AssistError('superseded', 'Cancelled: the server is shutting down'));
  }

  private async chat(entry: ModelEntry, client: LlmClient, prefix: string, suffix: string, path: string | undefined, signal: AbortSignal): Promise<string> {
    const doc = `${path ? `File: ${path}\n\n` : ''}${prefix}${CURSOR_TAG}${suffix}`;
    let answer = '';
    const events = this.deps.stream(
      client,
      {
        model: entry.modelName,
        system: this.deps.config().completion.systemPrompt ?? COMPLETION_INSTRUCTIONS,
        messages: [{ role: 'user', content: doc }],
        tools: [],
        maxOutputTokens: maxTokens(entry),
        signal,
        ...payload(entry),
      },
      // No retry: by the time one would be answered the editor has asked again.
      { maxRetries: 0, stallMs: COMPLETION_TIMEOUT_MS, onRetry: () => {} },
    );
    for await (const ev of events) if (ev.type === 'text') answer += ev.text;
    return codeOf(answer);
  }
}

function maxTokens(entry: ModelEntry): number {
  return Math.min(MAX_COMPLETION_TOKENS, entry.limit?.output ?? MAX_COMPLETION_TOKENS);
}

function payload(entry: ModelEntry): { payload?: Record<string, unknown> } {
  return entry.extraPayload ? { payload: entry.extraPayload } : {};
}
