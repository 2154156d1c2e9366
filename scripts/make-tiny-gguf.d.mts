/** Types for scripts/make-tiny-gguf.mjs (imported by tests and the bench). */
export function writeTinyGguf(path: string): { path: string; bytes: number; sha256: string };
