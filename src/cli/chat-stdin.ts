/**
 * The prompt of a one-shot `patchbay chat` read from stdin: `patchbay chat -`, and
 * `patchbay chat --json` given no prompt words while stdin is not a terminal (`git diff |
 * patchbay chat --json`). Without `--json`, piped lines with no prompt stay the REPL's lines.
 */
/** More than this is not a prompt anyone meant to send. */
const MAX_PROMPT_BYTES = 4 * 1024 * 1024;

export async function promptFromStdin(
  flags: { json?: boolean; stdinPrompt?: boolean; prompt: string },
  stdin: NodeJS.ReadStream = process.stdin,
): Promise<{ text: string } | { error: string } | undefined> {
  if (!flags.stdinPrompt) {
    if (!flags.json || flags.prompt) return undefined;
    if (stdin.isTTY) return { error: '--json answers one prompt: give it as words, or pipe it in (there is no interactive chat in JSON)' };
  }
  let bytes = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    bytes += b.length;
    if (bytes > MAX_PROMPT_BYTES) return { error: `the prompt on stdin is larger than ${MAX_PROMPT_BYTES / 1024 / 1024} MiB` };
    chunks.push(b);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (!text) return { error: 'no prompt on stdin (it was empty)' };
  return { text };
}
