/**
 * The last lines a stdio MCP server wrote to stderr, kept for error messages: a server that dies
 * during start-up usually says why there (npx: "npm error 404 Not Found …"), while the MCP client
 * only sees "Connection closed". Bounded in lines and characters; secrets are scrubbed, both the
 * key-like strings `redact` knows and the values of the server's own `env` (tokens, typically).
 */
import { redact } from '../../util/log.js';

const MAX_LINES = 8;
const MAX_CHARS = 600;

export class StderrTail {
  private readonly lines: string[] = [];
  private readonly secrets: string[];

  constructor(secrets: Iterable<string> = []) {
    // Short values ("1", "true") are settings, not secrets, and would blank out ordinary words.
    this.secrets = [...secrets].filter((s) => s.length >= 8);
  }

  push(line: string): void {
    const t = line.trim();
    if (!t) return;
    this.lines.push(t.length > MAX_CHARS ? `${t.slice(0, MAX_CHARS)}…` : t);
    if (this.lines.length > MAX_LINES) this.lines.shift();
  }

  /** The tail as one line ('' when the server wrote nothing), lines separated by " | ". */
  text(): string {
    const s = this.scrub(this.lines.join(' | '));
    return s.length > MAX_CHARS ? `…${s.slice(-MAX_CHARS)}` : s;
  }

  /** `text` without the secrets this tail knows of (for logging a line as it comes). */
  scrub(text: string): string {
    let s = text;
    for (const secret of this.secrets) s = s.split(secret).join('[redacted]');
    return redact(s);
  }
}
