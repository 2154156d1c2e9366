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
import { assistModel, type AssistDeps } from './deps.js';
import { rewriteInstructions, type RewriteContext } from './prompts.js';
import { codeOf, fileWindow } from './text.js';

const log = logger('rewrite');

/** A file bigger than this is left out of the prompt (the selection and path still go). */
const MAX_FILE_BYTES = 2 * 1024 * 1024;

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

  constructor(private readonly deps: AssistDeps) {}

  /**
   * Resolves the model (throws AssistError `noModel`) and starts the rewrite on the next turn of
   * the event loop, so the caller's answer goes out before the first event.
   */
  start(input: RewriteInput, emit: (e: RewriteEvent) => void): { model: string } {
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
    for (const ac of this.running) ac.abort();
    this.running.clear();
  }

  private async run(entry: ModelEntry, input: RewriteInput, emit: (e: RewriteEvent) => void, signal: AbortSignal): Promise<void> {
    const began = Date.now();
    const cfg = this.deps.config();
    let answer = '';
    let started = false;
    try {
      // A relative path (an editor that sends one) is taken from the first workspace folder.
      const fileText = input.path ? await readFileText(isAbsolute(input.path) ? input.path : resolve(this.deps.roots()[0] ?? '.', input.path)) : undefined;
      const system = rewriteInstructions(
        { ...input, ...(fileText !== undefined ? { fileText: fileWindow(fileText, input.range.startLine, cfg.rewrite.fullFileMaxLines) } : {}) },
        cfg.rewrite.systemPrompt,
      );
      const client = await this.deps.clientFor(entry);
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
        if (signal.aborted) return;
        if (!started) {
          started = true;
          emit({ type: 'started' });
        }
        if (ev.type === 'reasoningStart') emit({ type: 'reasoning' });
        else if (ev.type === 'text') {
          answer += ev.text;
          emit({ type: 'text', text: ev.text });
        }
      }
      if (signal.aborted) return;
      const code = codeOf(answer);
      if (code !== answer) emit({ type: 'replace', text: code });
      emit({ type: 'finished', totalTimeMs: Date.now() - began });
    } catch (e) {
      if (signal.aborted) return;
      log.warn(`rewrite failed: ${errorMessage(e)}`);
      emit({ type: 'error', message: errorMessage(e) });
    }
  }
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
