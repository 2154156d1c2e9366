/**
 * Rewrite: the selected text rewritten by the model following the user's request, streamed as it
 * comes. `start` answers at once with the model; the run goes on in the background and reports
 * through `emit`, in ECA's order (src/eca/features/rewrite.clj): `started` at the model's first
 * event, `reasoning` when it starts thinking, `text` pieces, then `replace` (only when the answer
 * had Markdown fences around the code) and `finished`; or `error` instead of the end.
 */
import { isAbsolute, resolve } from 'node:path';
import type { ModelEntry } from '../../shapes/llm.js';
import { readBounded } from '../../util/small-file.js';
import { errorMessage, logger } from '../../util/log.js';
import { AssistError, assistModel, type AssistDeps } from './deps.js';
import { rewriteInstructions, type RewriteContext } from './prompts.js';
import { codeOf, fileWindow } from './text.js';

const log = logger('rewrite');

/**
 * How much of the file is read: a bigger one is read this far and windowed like any other (the
 * selection and path always go). Past it a file is not source code anyone rewrites by selection.
 */
const MAX_FILE_BYTES = 32 * 1024 * 1024;
/** The file window's characters at most, fewer when the model's context is smaller (~3 a token, half of it). */
const MAX_WINDOW_CHARS = 256 * 1024;
const CHARS_PER_TOKEN = 3;
/** An answer longer than this is a model running away, not a rewrite of a selection: the call is stopped. */
const MAX_ANSWER_CHARS = 4 * 1024 * 1024;
/** A rewrite not done in this time is stopped with an error (a stream that trickles forever never stalls). */
const REWRITE_DEADLINE_MS = 5 * 60_000;

export type RewriteEvent =
  { type: 'started' } | { type: 'reasoning' } | { type: 'text'; text: string } | { type: 'replace'; text: string } | { type: 'finished'; totalTimeMs: number } | { type: 'error'; message: string };

export interface RewriteInput {
  text: string;
  prompt: string;
  /** Absolute path of the file the selection is in, if it has one. */
  path?: string;
  /** The selection as the editor gave it (lines 1-based, as ECA's plugins send them). */
  range: RewriteContext['range'];
}

export class Rewriter {
  private readonly running = new Set<AbortController>();
  private disposed = false;

  constructor(private readonly deps: AssistDeps) {}

  /**
   * Resolves the model (throws AssistError `noModel`) and starts the rewrite on the next turn of
   * the event loop, so the caller's answer goes out before the first event.
   */
  start(input: RewriteInput, emit: (e: RewriteEvent) => void): { model: string } {
    // A request that waited for the models while the server was closing must not start a run.
    if (this.disposed) throw new AssistError('cancelled', 'Cancelled: the server is shutting down');
    const entry = assistModel(this.deps, this.deps.config().rewrite.model, 'rewrite');
    const ac = new AbortController();
    this.running.add(ac);
    setImmediate(() => {
      void this.run(entry, input, emit, ac.signal).finally(() => this.running.delete(ac));
    });
    return { model: entry.id };
  }

  /** The workspace is closing: every rewrite stops, saying nothing more. */
  dispose(): void {
    this.disposed = true;
    for (const ac of this.running) ac.abort();
    this.running.clear();
  }

  private async run(entry: ModelEntry, input: RewriteInput, emit: (e: RewriteEvent) => void, stop: AbortSignal): Promise<void> {
    const began = Date.now();
    // The run's own controller: stopped by dispose (silently), the deadline or a runaway answer (with an error).
    const ac = new AbortController();
    const onStop = (): void => ac.abort();
    stop.addEventListener('abort', onStop, { once: true });
    const timer = setTimeout(() => ac.abort(new AssistError('timeout', `The rewrite took longer than ${REWRITE_DEADLINE_MS / 60_000} minutes; stopped`)), REWRITE_DEADLINE_MS);
    try {
      await this.runUntil(entry, input, emit, ac, stop, began);
    } finally {
      clearTimeout(timer);
      stop.removeEventListener('abort', onStop);
    }
  }

  private async runUntil(entry: ModelEntry, input: RewriteInput, emit: (e: RewriteEvent) => void, ac: AbortController, stop: AbortSignal, began: number): Promise<void> {
    const signal = ac.signal;
    const cfg = this.deps.config();
    let answer = '';
    let started = false;
    try {
      // A relative path (an editor that sends one) is taken from the first workspace folder.
      const fileText = input.path ? await readFileText(isAbsolute(input.path) ? input.path : resolve(this.deps.roots()[0] ?? '.', input.path)) : undefined;
      const system = rewriteInstructions(
        { ...input, ...(fileText !== undefined ? { fileText: fileWindow(fileText, input.range.startLine, cfg.rewrite.fullFileMaxLines, windowChars(entry), input.range.startCharacter) } : {}) },
        cfg.rewrite.systemPrompt,
      );
      const client = await this.deps.clientFor(entry, signal);
      const events = this.deps.stream(
        client,
        {
          model: entry.modelName,
          system,
          messages: [{ role: 'user', content: input.prompt }],
          tools: [],
          signal,
          ...(entry.limit ? { maxOutputTokens: entry.limit.output } : {}),
          ...(entry.extraPayload ? { payload: entry.extraPayload } : {}),
        },
        { maxRetries: cfg.chat.maxRetries, stallMs: cfg.chat.stallTimeoutSeconds * 1000, onRetry: (n, ms, e) => log.info(`rewrite: retry ${n} in ${ms} ms after: ${errorMessage(e)}`) },
      );
      for await (const ev of events) {
        if (signal.aborted) break;
        if (!started) {
          started = true;
          emit({ type: 'started' });
        }
        if (ev.type === 'reasoningStart') emit({ type: 'reasoning' });
        else if (ev.type === 'text') {
          answer += ev.text;
          emit({ type: 'text', text: ev.text });
          if (answer.length > MAX_ANSWER_CHARS) ac.abort(new AssistError('llm', `The answer ran past ${MAX_ANSWER_CHARS / (1024 * 1024)} MB; stopped`));
        }
      }
      if (signal.aborted) throw signal.reason;
      const code = codeOf(answer);
      if (code !== answer) emit({ type: 'replace', text: code });
      emit({ type: 'finished', totalTimeMs: Date.now() - began });
    } catch (e) {
      // dispose: nothing more is said; the deadline or the cap: the error says which.
      if (stop.aborted) return;
      const err = signal.aborted && signal.reason instanceof AssistError ? signal.reason : e;
      log.warn(`rewrite failed: ${errorMessage(err)}`);
      emit({ type: 'error', message: errorMessage(err) });
    }
  }
}

function windowChars(entry: ModelEntry): number {
  return entry.limit ? Math.max(4096, Math.min(MAX_WINDOW_CHARS, Math.floor((entry.limit.context * CHARS_PER_TOKEN) / 2))) : MAX_WINDOW_CHARS;
}

/** The file's text, or nothing when it cannot be read as a text file of a sensible size. */
async function readFileText(path: string): Promise<string | undefined> {
  try {
    const r = await readBounded(path, MAX_FILE_BYTES, { whole: true });
    return r.kind === 'file' && !r.more ? r.bytes.toString('utf8') : undefined;
  } catch {
    return undefined;
  }
}
