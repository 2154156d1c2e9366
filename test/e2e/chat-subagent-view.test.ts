/**
 * What `patchbay chat` shows of a subagent (issue 29, item 4) and of patchbay's internal notes
 * (item 5). The subagent's activity label and its tool calls are indented under the
 * `spawn_agent` line while it runs, in a real pseudo-terminal; a call of the subagent that needs
 * approval shows its block there and is asked. The fake LLM tells the subagent's requests from the
 * parent's by the system prompt (as test/e2e/subagents.test.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Reply } from '../fixtures/fake-llm.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { KEY, usePty } from '../support/pty.js';
import { BIN, cliEnv, fakeChatConfig, runPatchbay, tempDir, workspace } from './harness.js';

const llm = useFakeLlm({ reset: 'afterEach' });
const spawnPty = usePty();

/** Requests whose system prompt has `marker` get `child`'s replies, the others `parent`'s; each by whether a tool result came back yet. */
function route(marker: string, child: { first: Reply; then: Reply }, parent: { first: Reply; then: Reply }): void {
  llm().onRequest = (path, body: any) => {
    if (path !== '/v1/chat/completions') return undefined;
    const system = String(body.messages.find((m: any) => m.role === 'system')?.content ?? '');
    const answered = body.messages.some((m: any) => m.role === 'tool');
    const side = system.includes(marker) ? child : parent;
    return answered ? side.then : side.first;
  };
}

const spawn = (args: Record<string, unknown>): Reply => [{ toolCall: { id: 's1', name: 'patchbay__spawn_agent', args } }];

function oneShot(prompt: string, files: Record<string, string>) {
  const home = tempDir('pb-sub-home-');
  const cwd = workspace(files, 'pb-sub-ws-');
  const p = spawnPty(process.execPath, [BIN, 'chat', prompt], { cwd, env: cliEnv(home, { PATCHBAY_CONFIG: fakeChatConfig(llm().url) }) });
  return { p, cwd };
}

describe('patchbay chat: a subagent at work, on a terminal', () => {
  it('its activity label and its tool calls are indented under the spawn_agent line, its status in the status line', async () => {
    route(
      'You are an explorer subagent',
      { first: [{ toolCall: { id: 'c1', name: 'patchbay__read_file', args: { path: 'a.txt' } } }], then: [{ text: 'alpha is in a.txt' }] },
      { first: spawn({ agent: 'explorer', task: 'Find alpha', activity: 'finding alpha' }), then: [{ text: 'Found it.' }] },
    );
    const { p } = oneShot('where is alpha?', { 'a.txt': 'alpha\n' });
    await p.waitFor('• spawn_agent\n  explorer: finding alpha\n');
    // The subagent's call: indented, under it (the status line before it is cleared with \r).
    await p.waitFor(/(?:^|[\r\n])  ✓ read_file \(\d+ ms\)\n/);
    // Then the spawn_agent call itself ends, back at the margin.
    await p.waitFor(/(?:^|[\r\n])✓ spawn_agent \(\d+ ms\)\n/);
    await p.waitFor('Found it.');
    expect(await p.exit()).toBe(0);
    // While the subagent ran, the status line said whose work it was and what it did.
    expect(p.text()).toContain('explorer: finding alpha · read_file');
  });

  it("a subagent's call that needs approval shows its block indented under spawn_agent, and is asked on the terminal", async () => {
    route(
      'You are a general-purpose subagent',
      { first: [{ toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: 'made.txt', content: 'made by the subagent\n' } } }], then: [{ text: 'Wrote it.' }] },
      { first: spawn({ agent: 'general', task: 'Create made.txt', activity: 'writing a file' }), then: [{ text: 'The subagent wrote it.' }] },
    );
    const { p, cwd } = oneShot('make the file', {});
    await p.waitFor('• spawn_agent\n  general: writing a file\n');
    await p.waitFor(/(?:^|[\r\n])  \? write_file/);
    await p.waitFor('\n    path: made.txt\n');
    await p.waitFor('\n    +made by the subagent\n');
    await p.waitFor('Run write_file? [y]es / [n]o / [a]lways for this chat');
    p.write(`y${KEY.enter}`);
    await p.waitFor(/(?:^|[\r\n])  ✓ write_file made\.txt \+1 -0 \(\d+ ms\)\n/);
    await p.waitFor(/(?:^|[\r\n])✓ spawn_agent \(\d+ ms\)\n/);
    await p.waitFor('The subagent wrote it.');
    expect(await p.exit()).toBe(0);
    expect(existsSync(join(cwd, 'made.txt'))).toBe(true);
    expect(readFileSync(join(cwd, 'made.txt'), 'utf8')).toBe('made by the subagent\n');
  });
});

describe('patchbay chat: a subagent at work, piped', () => {
  it('the same lines, without a status line', async () => {
    route(
      'You are an explorer subagent',
      { first: [{ toolCall: { id: 'c1', name: 'patchbay__read_file', args: { path: 'a.txt' } } }], then: [{ text: 'alpha is in a.txt' }] },
      { first: spawn({ agent: 'explorer', task: 'Find alpha', activity: 'finding alpha' }), then: [{ text: 'Found it.' }] },
    );
    const r = await runPatchbay(['chat', 'where is alpha?'], { home: tempDir('pb-sub-home-'), cwd: workspace({ 'a.txt': 'alpha\n' }), env: { PATCHBAY_CONFIG: fakeChatConfig(llm().url) } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^• spawn_agent\n  explorer: finding alpha\n  ✓ read_file \(\d+ ms\)\n✓ spawn_agent \(\d+ ms\)\n/m);
    expect(r.stdout).toContain('Found it.');
  });
});

describe('patchbay chat: notes on patchbay’s workings are for --verbose', () => {
  // The agent changed, and with it the prompt and the tools.
  const NOTE = /System prompt changed \(agent[^)]*\), prompt cache invalidated\./;

  async function switchAgent(extra: string[]) {
    llm().script([{ text: 'First.' }], [{ text: 'Second.' }]);
    return runPatchbay(['chat', ...extra], { home: tempDir('pb-sub-home-'), cwd: workspace(), env: { PATCHBAY_CONFIG: fakeChatConfig(llm().url) }, stdin: 'hello\n/agent plan\nagain\n' });
  }

  it('"prompt cache invalidated" is not shown without --verbose', async () => {
    const r = await switchAgent([]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Second.');
    expect(r.output).not.toContain('prompt cache invalidated');
  });

  it('and is with --verbose', async () => {
    const r = await switchAgent(['--verbose']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(NOTE);
    expect(r.stdout.search(NOTE)).toBeLessThan(r.stdout.indexOf('Second.'));
  });
});
