/** Types for scripts/make-tiny-gguf.mjs (imported by tests and the bench). */
/** `opts.reply`: a text the model answers every prompt with (greedy decoding), then end of text. */
export function writeTinyGguf(path: string, opts?: { reply?: string }): { path: string; bytes: number; sha256: string };
