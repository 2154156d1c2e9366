/**
 * A prompt that arrives while configured MCP servers are still in their first start (an
 * `npx -y …` server can take many seconds) would build its tool list without their tools; a
 * one-shot client never gets a second turn. So the turn waits for them, bounded by
 * `mcpStartWaitSeconds`, shows what it waits for as progress, and names the servers that failed
 * or are still starting when it goes on.
 */
import type { McpHost } from './types.js';

export interface StartWaitReport {
  progress(text: string): void;
  notice(text: string): void;
}

export async function waitForMcpStarts(mcp: McpHost, report: StartWaitReport, signal: AbortSignal, seconds: number): Promise<void> {
  const waited = mcp.starting();
  if (!waited.length || seconds <= 0 || signal.aborted) return;
  report.progress(`Waiting for MCP servers: ${waited.join(', ')}…`);
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  await Promise.race([
    mcp.firstStarts(),
    new Promise<void>((r) => (timer = setTimeout(r, seconds * 1000))),
    new Promise<void>((r) => signal.addEventListener('abort', (onAbort = () => r()), { once: true })),
  ]);
  clearTimeout(timer);
  if (onAbort) signal.removeEventListener('abort', onAbort);
  if (signal.aborted) return;
  const byName = new Map(mcp.servers().map((s) => [s.name, s]));
  const notes: string[] = [];
  for (const name of waited) {
    const s = byName.get(name);
    if (s?.status === 'failed') notes.push(`MCP server ${name} failed to start${s.lastError ? `: ${s.lastError}` : ''}; its tools are not available.`);
    else if (s?.status === 'starting' || s?.status === 'stopped') notes.push(`MCP server ${name} is still starting after ${seconds} s; its tools join a later prompt.`);
  }
  if (notes.length) report.notice(notes.join('\n'));
}
