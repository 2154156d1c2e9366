/**
 * A tool call that settles while its elicitation is still open (src/peers/mcp/session.ts
 * `callThroughSdk`, running-calls.ts `elicit`): the call's end withdraws the question, and
 * nothing of the call may outlive it: no timer re-armed by the question's release, and so no
 * `notifications/cancelled` for a request the server already answered (MCP basic/utilities/
 * cancellation: "MUST only reference requests that were previously issued ... and are believed
 * to still be in-progress"). A real MCP server process: test/fixtures/mcp-elicit.mjs.
 */
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseServerEntry } from '../../src/peers/mcp/config.js';
import { McpSession } from '../../src/peers/mcp/session.js';
import type { AskUser } from '../../src/shapes/ask.js';
import type { ToolContext } from '../../src/shapes/tool.js';
import { logger } from '../../src/util/log.js';
import { tempDir } from '../e2e/harness.js';

const FIXTURE = resolve(import.meta.dirname, '../fixtures/mcp-elicit.mjs');
const TIMEOUT_MS = 1500;

let session: McpSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('an MCP tool call that returns while its elicitation is open', () => {
  it('leaves no timer behind and sends no notifications/cancelled for the finished call', async () => {
    const parsed = parseServerEntry('elicit', { command: process.execPath, args: [FIXTURE] });
    if (!parsed.ok) throw new Error(parsed.error);
    let asked = 0;
    // The user never answers: the question stays open until it is withdrawn.
    const ask: AskUser = (_chat, _q, signal) => {
      asked++;
      return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('withdrawn')), { once: true }));
    };
    const root = tempDir();
    session = await McpSession.open({
      name: 'elicit',
      config: parsed.config,
      env: process.env,
      roots: () => [root],
      timeoutMs: TIMEOUT_MS,
      logLevel: 'error',
      log: logger('test'),
      signal: new AbortController().signal,
      onClosed: () => {},
      onListChanged: () => {},
      ask,
    });
    const ctx: ToolContext = { signal: new AbortController().signal, roots: [root], chatId: 'c1', toolCallId: 't1', editor: {} };
    const before = timers();
    const result = await session.callTool('hasty', {}, ctx);
    expect(result.error).toBe(false);
    // Let the withdrawal of the open question run its course.
    await sleep(200);
    expect(timers()).toBe(before);
    // Past the call's timeout: a timer left armed would have aborted the call by now.
    await sleep(TIMEOUT_MS + 500);
    const seen = await session.callTool('cancels_seen', {}, ctx);
    expect(seen.outputs).toEqual([{ type: 'text', text: '[]' }]);
    // The question was put to the user, so the withdrawal path ran.
    expect(asked).toBe(1);
  }, 30_000);
});
