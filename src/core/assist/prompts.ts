/**
 * The built-in instructions of inline completion and rewrite (replaceable with
 * `completion.systemPrompt` / `rewrite.systemPrompt`). Written for patchbay; what they ask for
 * follows ECA's (resources/prompts/inline_completion.md, rewrite.md): only the code, no fences.
 */

/** Where the cursor is in the document the chat-style completion sends. */
export const CURSOR_TAG = '<CURSOR>';

export const COMPLETION_INSTRUCTIONS = `You complete code in an editor. The user's document follows, with ${CURSOR_TAG} where the cursor is.
Answer with the exact text to insert at ${CURSOR_TAG}, nothing else: no explanation, no Markdown fences, not the text around it.
- Prefer a short completion (one to five lines) that ends at a natural boundary and leaves the code valid.
- Match the file's style: indentation, quotes, semicolons, naming.
- Use names that exist in the document rather than inventing new ones.
- Never output placeholders such as TODO.
- If nothing sensible fits, answer with nothing.`;

export interface RewriteContext {
  text: string;
  path?: string;
  /** The file's text (possibly a window of it, see text.ts fileWindow). */
  fileText?: string;
  range: { startLine: number; startCharacter: number; endLine: number; endCharacter: number };
}

export function rewriteInstructions(c: RewriteContext, custom?: string): string {
  const file = [c.path ? `File: ${c.path}` : '', c.fileText !== undefined ? `File content:\n\`\`\`\n${c.fileText}\n\`\`\`` : ''].filter(Boolean).join('\n\n');
  const range = `From line ${c.range.startLine}, character ${c.range.startCharacter} to line ${c.range.endLine}, character ${c.range.endCharacter}.`;
  const head =
    custom ??
    `You rewrite a piece of text the user selected in their editor, following the user's request.
Write the replacement in full: never abbreviate or leave code out. Do not ask questions: make the assumptions you need.
Answer ONLY with the text that replaces the selection: no explanation, no Markdown fences. Your answer replaces the selection as it is.`;
  return `${head}\n\n## Context\n\n${file || '(no file)'}\n\n## Selection\n\n${range}\n\n\`\`\`\n${c.text}\n\`\`\``;
}
