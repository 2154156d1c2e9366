/**
 * The tool-call state machine against recording fakes of its environment: what reaches the
 * editor, in which write batches, and which states are stored.
 */
import { describe, expect, it } from 'vitest';
import type { ChatEvent, ChatEvents } from '../../src/core/events.js';
import { toEcaNotifications } from '../../src/server/eca/eca-events.js';
import type { ChatPersistence, ToolCallRecord } from '../../src/core/persistence.js';
import type { Tool } from '../../src/shapes/tool.js';
import { ToolCall, type ApprovalAnswer } from '../../src/core/tool-calls/tool-call.js';

interface Recorded {
  /** Content types in emission order; a batch made with `together` is one entry joined by `+`. */
  writes: string[];
  saved: ToolCallRecord['state'][];
}

function harness(opts: { readOnly: boolean; answer?: ApprovalAnswer; abort?: boolean }) {
  const rec: Recorded = { writes: [], saved: [] };
  let batch: string[] | undefined;
  const events = {
    // Recorded as the ECA contents they become, the way the editor sees them.
    event: (chat: string, e: ChatEvent) => {
      for (const n of toEcaNotifications(chat, e)) {
        const type = n.method === 'chat/contentReceived' ? n.params.content.type : n.method;
        if (batch) batch.push(type);
        else rec.writes.push(type);
      }
    },
    together: (fn: () => void) => {
      batch = [];
      try {
        fn();
      } finally {
        rec.writes.push(batch.join('+'));
        batch = undefined;
      }
    },
  } as unknown as ChatEvents;
  const store = { saveToolCall: (r: ToolCallRecord) => rec.saved.push(r.state) } as unknown as ChatPersistence;
  const ac = new AbortController();
  if (opts.abort) ac.abort();
  const tool: Tool = {
    name: 'echo',
    server: 'srv',
    origin: 'mcp',
    description: 'echo',
    inputSchema: { type: 'object' },
    readOnly: opts.readOnly,
    mutates: false,
    call: async (args) => ({ error: false, outputs: [{ type: 'text', text: String(args.message) }] }),
  };
  const call = new ToolCall(
    'c1',
    'srv__echo',
    tool,
    { message: 'hi' },
    {
      chatId: 'chat',
      agent: 'code',
      approval: {},
      sessionApproved: new Set(),
      store,
      events,
      // The tool message is committed in the same sequence the editor sees the contents.
      remember: (m, row) => {
        rec.writes.push(`remember:${m.role === 'tool' ? m.outcome : m.role}`);
        if (row) rec.saved.push(row.state);
      },
      messageSeq: 1,
      ctx: { signal: ac.signal, roots: ['/tmp'], chatId: 'chat', editor: {} },
      askUser: async () => opts.answer ?? { approved: true },
    },
  );
  /** The stored tool message (run() always returns one for a tool call). */
  const run = async () => {
    const m = await call.run();
    if (m.role !== 'tool') throw new Error(`run() returned a ${m.role} message`);
    return m;
  };
  return { run, rec };
}

describe('ToolCall', () => {
  it('a call that needs no approval is announced and started in one editor write, then committed, then answered', async () => {
    const { run, rec } = harness({ readOnly: true });
    const msg = await run();
    expect(msg.outcome).toBe('called');
    expect(msg.llmText).toBe('hi');
    // ECA's progress text follows each (chat/tool_calls.clj :send-progress).
    expect(rec.writes).toEqual(['toolCallRun+toolCallRunning+progress', 'remember:called', 'toolCalled']);
    // No row for the microseconds of deciding: the first stored state is running.
    expect(rec.saved).toEqual(['running', 'called']);
  });

  it('a call that asks announces itself before waiting, then starts on its own', async () => {
    const { run, rec } = harness({ readOnly: false, answer: { approved: true } });
    await run();
    expect(rec.writes).toEqual(['toolCallRun', 'progress', 'toolCallRunning+progress', 'remember:called', 'toolCalled']);
    expect(rec.saved).toEqual(['waitingApproval', 'running', 'called']);
  });

  it('a rejected call is announced and rejected, never started', async () => {
    const { run, rec } = harness({ readOnly: false, answer: { approved: false, reason: 'user' } });
    const msg = await run();
    expect(msg.outcome).toBe('rejected');
    expect(rec.writes).toEqual(['toolCallRun', 'progress', 'remember:rejected', 'toolCallRejected']);
    expect(rec.saved).toEqual(['waitingApproval', 'rejected']);
  });

  it('a call stopped before it ran is still announced before its rejection', async () => {
    const { run, rec } = harness({ readOnly: true, abort: true });
    const msg = await run();
    expect(msg.reason).toBe('stopped');
    expect(rec.writes).toEqual(['toolCallRun', 'remember:rejected', 'toolCallRejected']);
  });
});
