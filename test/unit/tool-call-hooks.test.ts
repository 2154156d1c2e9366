/**
 * The tool-call state machine with postToolCall hooks (ECA docs/config/hooks.md "postToolCall";
 * chat/tool_calls.clj runs `:trigger-post-tool-call-hook` on `:execution-end`): a real Hooks
 * engine and bash, a tool that ignores its stop signal and returns late.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatEvents } from '../../src/core/events.js';
import type { ChatPersistence } from '../../src/core/persistence.js';
import type { StoredMessage } from '../../src/core/chat/messages.js';
import type { Tool } from '../../src/shapes/tool.js';
import { ToolCall } from '../../src/core/tool-calls/tool-call.js';
import { Hooks } from '../../src/core/hooks/index.js';
import { removeDir, tempDir } from './tools-helpers.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await removeDir(d);
});

describe('ToolCall and postToolCall hooks', () => {
  it('a result that arrives after a stop is redacted by postToolCall before it replaces the placeholder', async () => {
    const root = await tempDir('patchbay-toolhooks-');
    dirs.push(root);
    const hooks = new Hooks({
      hooks: () => ({ redact: { type: 'postToolCall', actions: [{ type: 'shell', shell: `echo '{"replacedOutput":"[REDACTED]"}'` }] } }),
      roots: () => [root],
      dbPath: '/db',
      executable: '/bin/patchbay',
      env: process.env,
      problems: () => {},
    });
    const ac = new AbortController();
    let release!: () => void;
    const returned = new Promise<void>((r) => (release = r));
    // Ignores its signal: returns its secret only once released, after the stop.
    const tool: Tool = {
      name: 'slow',
      server: 'srv',
      origin: 'mcp',
      description: 'slow',
      inputSchema: { type: 'object' },
      readOnly: true,
      mutates: false,
      call: async () => (await returned, { error: false, outputs: [{ type: 'text', text: 'secret42' }] }),
    };
    let replaced: StoredMessage | undefined;
    let lateDone!: () => void;
    const late = new Promise<void>((r) => (lateDone = r));
    const call = new ToolCall(
      'c1',
      'srv__slow',
      tool,
      {},
      {
        chatId: 'chat',
        agent: 'code',
        approval: { byDefault: 'allow' },
        sessionApproved: new Set(),
        store: { saveToolCall: () => {} } as unknown as ChatPersistence,
        events: { event: () => {} } as unknown as ChatEvents,
        remember: () => (m: StoredMessage) => ((replaced = m), lateDone()),
        messageSeq: 1,
        ctx: { signal: ac.signal, roots: [root], chatId: 'chat', editor: {} },
        askUser: async () => ({ approved: true }),
        stopGraceMs: 20,
        hooks: { hooks, chat: { chatId: 'chat' } },
      },
    );
    const running = call.run();
    setTimeout(() => ac.abort(), 20);
    const placeholder = await running;
    expect(placeholder.role === 'tool' && placeholder.llmText).toMatch(/stopped the prompt/);
    release();
    await late;
    expect(replaced?.role === 'tool' && replaced.llmText).toBe('[REDACTED]');
  });
});
