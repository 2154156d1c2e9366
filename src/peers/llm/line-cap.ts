/**
 * The longest line patchbay reads from an LLM stream (an SSE line, an SSE event's data, an
 * Ollama NDJSON line). Real chunks are a few KB; a server that sends megabytes without a
 * newline would otherwise grow memory without bound, so the stream is stopped instead.
 */
import { LlmError } from '../../shapes/llm.js';

export const MAX_LINE_CHARS = 8 * 1024 * 1024;

/** Not retryable: the same server would send the same line again. */
export function lineTooLong(provider: string): LlmError {
  return new LlmError(`${provider}: the LLM sent a line longer than ${MAX_LINE_CHARS / (1024 * 1024)} MB; stream stopped`, undefined, false);
}
