/**
 * An MCP server that floods: 50,000 log notifications and 50,000 stderr lines (and a 200 KB
 * line of each), then a tool result nested 200,000 arrays deep. server.log stays small and
 * says what it left out; the server keeps answering tool calls.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, useTempDirs, workspace } from './harness.js';

const scratch = useTempDirs();
const { llm, track } = useFakeLlmSuite();
const WIRE = resolve(import.meta.dirname, '../fixtures/mcp-wire.mjs');

function logSize(file: string): number {
  // Rotated files count too: a flood must not simply push the log into .1 and .2.
  return [file, `${file}.1`, `${file}.2`].reduce((n, f) => n + (existsSync(f) ? statSync(f).size : 0), 0);
}

async function settled(file: string, what: RegExp): Promise<void> {
  const deadline = Date.now() + 30_000;
  let last = -1;
  let stableSince = Date.now();
  for (;;) {
    const size = logSize(file);
    if (size !== last) [last, stableSince] = [size, Date.now()];
    // Done once the summary is there and nothing has been added for 1.5 s.
    if (what.test(readFileSync(file, 'utf8')) && Date.now() - stableSince > 1500) return;
    if (Date.now() > deadline) throw new Error(`server.log did not settle (${size} bytes)`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('an MCP server flooding its logs', () => {
  it('costs server.log under 200 KB with a "suppressed" count; tool calls still work, a too-deep result is a tool error', async () => {
    const home = scratch(tempDir());
    const config = fakeProviderConfig(llm().url, 'openai-chat', {
      mcpServers: { wire: { command: process.execPath, args: [WIRE], env: { MCP_LOG_FLOOD: '50000' } } },
      toolCall: { approval: { allow: { wire: {} } } },
    });
    const p = track(new EcaProc({ home, config }));
    await p.initialize(scratch(workspace()));
    await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.name === 'wire' && m.params.status === 'running', 'wire running', 30_000);

    llm().script([{ toolCall: { id: 'k1', name: 'wire__ok', args: { n: 1 } } }], [{ toolCall: { id: 'd1', name: 'wire__deep', args: {} } }], [{ text: 'done' }]);
    const chatId = (await p.request('chat/prompt', { message: 'call them' })).result.chatId;
    await p.turnDone(chatId, 1, 30_000);
    const called = (id: string) => p.contents(chatId).find((c) => c.content.type === 'toolCalled' && c.content.id === id)!.content;
    expect(called('k1').error).toBe(false);
    expect(JSON.stringify(called('k1').outputs)).toContain('ok {\\"n\\":1}');
    expect(called('d1').error).toBe(true);
    expect(JSON.stringify(called('d1').outputs)).toMatch(/nested deeper than \d+ levels/);
    expect(p.text(chatId)).toBe('done');

    const file = join(home, '.patchbay', 'logs', 'server.log');
    await settled(file, /log lines from wire \(stderr\) suppressed[^]*log lines from wire suppressed|log lines from wire suppressed[^]*log lines from wire \(stderr\) suppressed/);
    const log = readFileSync(file, 'utf8');
    expect(logSize(file)).toBeLessThan(200 * 1024);
    const suppressed = [...log.matchAll(/… (\d+) log lines from wire (?:\(stderr\) )?suppressed/g)].reduce((n, m) => n + Number(m[1]), 0);
    // Most of the 100,002 lines were counted, not written.
    expect(suppressed).toBeGreaterThan(90_000);
    // Both kinds got through at first (each has its own burst); the 200 KB lines never whole.
    expect(log).toMatch(/flood: log line 0\n/);
    expect(log).toMatch(/stderr: stderr line 0\n/);
    expect(log).not.toMatch(/L{2000}/);
    // Still serving the editor.
    expect((await p.request('chat/list', {})).result).toBeDefined();
  }, 90_000);
});
