/**
 * Inline completion: the text to insert at the cursor. A model configured with `fim` gets the
 * prefix and suffix on its API's fill-in-the-middle endpoint; any other model a chat request with
 * the document and a cursor tag. One completion at a time: an editor asks again on every
 * keystroke, so a newer request aborts the older one's LLM call and the older fails `superseded`.
 */
import type { LlmClient, ModelEntry } from '../../shapes/llm.js';
import { errorMessage } from '../../util/log.js';
import { AssistError, assistModel, type AssistDeps } from './deps.js';
import { completionDefault, completionPayload } from './model-choice.js';
import { COMPLETION_INSTRUCTIONS, CURSOR_TAG } from './prompts.js';
import { codeOf, headOf, splitAt, tailOf } from './text.js';

/** As ECA (src/eca/features/completion.clj): a completion not back in 30 s is given up. */
const COMPLETION_TIMEOUT_MS = 30_000;
/** A completion is a few lines: the model is not let run on. */
const MAX_COMPLETION_TOKENS = 256;
/** A chat model that runs on past this is not completing at the cursor: the call is stopped. */
const MAX_ANSWER_CHARS = 64 * 1024;
/**
 * How much of the document goes to the model: the end of the text before the cursor and the
 * start of the text after it, at line boundaries (the whole of a large file on every keystroke
 * is slow and costly, and past the model's context it fails).
 */
const BEFORE_CHARS = 16 * 1024;
const AFTER_CHARS = 4 * 1024;
/** Tokens kept for the instructions and the answer when a model's context bounds the window; ~3 characters a token. */
const RESERVED_TOKENS = 512;
const CHARS_PER_TOKEN = 3;

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
  private disposed = false;

  constructor(private readonly deps: AssistDeps) {}

  /**
   * The text to insert at the cursor ('' when the model has nothing). Throws AssistError. `cancel`
   * is the front end withdrawing the request.
   */
  async complete(req: InlineRequest, cancel?: AbortSignal): Promise<{ text: string; model: string }> {
    // A request that waited for the models while the server was closing must not start a call.
    if (this.disposed) throw new AssistError('cancelled', 'Cancelled: the server is shutting down');
    if (cancel?.aborted) throw new AssistError('cancelled', 'Cancelled by the editor');
    const configured = this.deps.config().completion.model;
    const chosen = assistModel(this.deps, configured, 'completion');
    const entry = configured ? chosen : completionDefault(this.deps.models(), chosen);
    this.current?.abort(new AssistError('superseded', 'Cancelled: a newer completion request replaced this one'));
    const ac = new AbortController();
    this.current = ac;
    const onCancel = (): void => ac.abort(new AssistError('cancelled', 'Cancelled by the editor'));
    cancel?.addEventListener('abort', onCancel, { once: true });
    const timer = setTimeout(() => ac.abort(new AssistError('timeout', 'Timeout waiting for completion')), COMPLETION_TIMEOUT_MS);
    try {
      const whole = splitAt(req.text, req.line, req.character);
      const budget = windowChars(entry);
      const prefix = tailOf(whole.prefix, budget.before);
      const suffix = headOf(whole.suffix, budget.after);
      const client = await this.deps.clientFor(entry, ac.signal);
      const text =
        entry.fim && client.fillInMiddle
          ? await client.fillInMiddle({ model: entry.modelName, prompt: prefix, suffix, maxOutputTokens: maxTokens(entry), signal: ac.signal, ...payload(entry) })
          : await this.chat(entry, client, prefix, suffix, req.path, ac);
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
    this.disposed = true;
    this.current?.abort(new AssistError('superseded', 'Cancelled: the server is shutting down'));
  }

  private async chat(entry: ModelEntry, client: LlmClient, prefix: string, suffix: string, path: string | undefined, ac: AbortController): Promise<string> {
    const doc = `${path ? `File: ${path}\n\n` : ''}${prefix}${CURSOR_TAG}${suffix}`;
    const signal = ac.signal;
    let answer = '';
    let finish: string | undefined;
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
    for await (const ev of events) {
      if (ev.type === 'finish') finish = ev.reason;
      if (ev.type !== 'text') continue;
      answer += ev.text;
      if (answer.length > MAX_ANSWER_CHARS) {
        ac.abort(new AssistError('llm', `Completion failed: the model's answer ran past ${MAX_ANSWER_CHARS / 1024} KB; stopped`));
        throw ac.signal.reason;
      }
    }
    const code = codeOf(answer);
    // A reasoning model can spend the whole budget thinking: say so rather than answer nothing.
    if (!code.trim() && finish === 'length')
      throw new AssistError('llm', `Completion failed: ${entry.id} used its ${maxTokens(entry)} output tokens without answering (a reasoning model? set completion.model to one that does not reason)`);
    return code;
  }
}

function maxTokens(entry: ModelEntry): number {
  return Math.min(MAX_COMPLETION_TOKENS, entry.limit?.output ?? MAX_COMPLETION_TOKENS);
}

function payload(entry: ModelEntry): { payload?: Record<string, unknown> } {
  const p = completionPayload(entry);
  return p ? { payload: p } : {};
}

/** The characters of document before and after the cursor: 16 KB and 4 KB, less when the model's context is smaller. */
function windowChars(entry: ModelEntry): { before: number; after: number } {
  if (!entry.limit) return { before: BEFORE_CHARS, after: AFTER_CHARS };
  const chars = Math.max(1024, (entry.limit.context - maxTokens(entry) - RESERVED_TOKENS) * CHARS_PER_TOKEN);
  if (chars >= BEFORE_CHARS + AFTER_CHARS) return { before: BEFORE_CHARS, after: AFTER_CHARS };
  return { before: Math.floor(chars * 0.8), after: Math.floor(chars * 0.2) };
}
