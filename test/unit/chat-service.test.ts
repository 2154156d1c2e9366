/**
 * The turn logic without a server: ChatService driven directly, with a scripted LLM client
 * (each model step yields the LlmEvents of its script), a real SQLite store in a temp dir and a
 * recording events sink. Asserts the core events a turn emits and how its handle resolves.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { ChatService } from '../../src/core/chat/chats.js';
import { CommandRegistry } from '../../src/core/chat/commands.js';
import type { ChatDeps } from '../../src/core/deps.js';
import { chatEventSchema, type ChatEvent } from '../../src/core/events.js';
import { ToolRegistry } from '../../src/core/tool-calls/tool-registry.js';
import { LlmError, type LlmClient, type LlmEvent, type LlmRequest, type ModelEntry } from '../../src/shapes/llm.js';
import type { Tool, ToolResult } from '../../src/shapes/tool.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { BUILT_IN_SUBAGENTS } from '../../src/core/subagents/definitions.js';
import { JobRegistry } from '../../src/core/jobs/registry.js';
import { nativeTools } from '../../src/core/tools/native/index.js';
import { spawnAgentTool, type SpawnAgentOptions } from '../../src/core/tools/spawn-agent.js';
import { LspHostImpl } from '../../src/peers/lsp/host.js';

/** One model step: its events in order; `hang` then waits for the abort; `fail` throws after them. */
interface Step {
  events: LlmEvent[];
  hang?: boolean;
  fail?: Error;
}

const MODEL: ModelEntry = { id: 'fake/m', provider: 'fake', api: 'openai-chat', modelName: 'm', url: 'http://127.0.0.1:1' };

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function setup(steps: Step[], tools: Tool[] = [], frontEnd?: ChatDeps['frontEnd'], model: ModelEntry = MODEL) {
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-chat-service-'));
  const store = new SqliteStore(join(dir, 'chats.db'));
  cleanups.push(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const registry = new ToolRegistry();
  registry.set('native', tools);
  const events: ChatEvent[] = [];
  /** Called on each event, after it is recorded: a test reacts to it (stop, approve…). */
  let onEvent: (e: ChatEvent) => void = () => {};
  const requests: LlmRequest[] = [];
  const client: LlmClient = {
    api: 'openai-chat',
    async *stream(req) {
      requests.push({ ...req, messages: [...req.messages] });
      const step = steps.shift();
      if (!step) throw new Error('the script has no more steps');
      for (const e of step.events) yield e;
      if (step.hang) {
        await new Promise((_, reject) => {
          const stop = () => reject(new Error('aborted'));
          if (req.signal.aborted) stop();
          req.signal.addEventListener('abort', stop, { once: true });
        });
      }
      if (step.fail) throw step.fail;
    },
  };
  const config = configSchema.parse({ chat: { generateTitles: false } });
  const deps: ChatDeps = {
    store,
    events: {
      event: (_chatId, e) => {
        // Every event core emits is valid against its own schema.
        expect(chatEventSchema.safeParse(e).success, JSON.stringify(e)).toBe(true);
        events.push(e);
        onEvent(e);
      },
      opened: () => {},
      cleared: () => {},
      deleted: () => {},
      showMessage: () => {},
    },
    tools: registry,
    editor: {},
    config: () => config,
    roots: () => [dir],
    models: () => [model],
    defaultModel: () => model,
    clientFor: async () => client,
    stream: (c, req) => c.stream(req),
    cost: () => undefined,
    renderContexts: async () => ({ text: '', errors: [] }),
    promptSections: () => [],
    updatedContexts: () => [],
    stopGraceMs: 20,
    frontEnd,
  };
  const chats = new ChatService(deps, new CommandRegistry());
  cleanups.push(() => void chats.dispose(0));
  return { chats, events, store, requests, steps, on: (f: (e: ChatEvent) => void) => (onEvent = f) };
}

/** Event types, with a tool call's state and a turn's stop reason: `toolCall:running`, `turnEnded:cancelled`. */
function kinds(events: ChatEvent[]): string[] {
  return events.map((e) => (e.type === 'toolCall' ? `toolCall:${e.state}` : e.type === 'turnEnded' ? `turnEnded:${e.stopReason}` : e.type === 'status' ? `status:${e.status}` : e.type));
}

function tool(name: string, opts: { readOnly: boolean; call?: (signal: AbortSignal) => Promise<ToolResult> }): Tool {
  return {
    name,
    server: 'patchbay',
    origin: 'native',
    description: name,
    inputSchema: { type: 'object' },
    readOnly: opts.readOnly,
    mutates: !opts.readOnly,
    call: async (_args, ctx) => (opts.call ? opts.call(ctx.signal) : { error: false, outputs: [{ type: 'text', text: `${name} ran` }] }),
  };
}

const text = (t: string): LlmEvent => ({ type: 'text', text: t });
const finish = (reason: Extract<LlmEvent, { type: 'finish' }>['reason']): LlmEvent => ({ type: 'finish', reason });
const callTool = (id: string, name: string): LlmEvent[] => [
  { type: 'toolCallStart', id, name: `patchbay__${name}` },
  { type: 'toolCallDelta', id, argsDelta: '{}' },
  { type: 'toolCallEnd', id, name: `patchbay__${name}`, args: {} },
  finish('tool_calls'),
];

describe('ChatService turns', () => {
  it('a plain answer ends with end_turn, and the events say so in order', async () => {
    const { chats, events } = setup([{ events: [text('Hel'), text('lo'), finish('stop')] }]);
    const h = chats.prompt({ message: 'hi', contentId: 'c1' });
    expect(h.status).toBe('started');
    expect(await h.done).toEqual({ stopReason: 'end_turn' });
    expect(kinds(events)).toEqual(['status:running', 'userMessage', 'progress', 'assistantText', 'assistantText', 'turnEnded:end_turn']);
    expect(events[1]).toEqual({ type: 'userMessage', text: 'hi', id: 'c1' });
  });

  it('a stop mid-stream cancels the turn: stopping, then turnEnded cancelled', async () => {
    const { chats, events, on } = setup([{ events: [text('partial')], hang: true }]);
    const h = chats.prompt({ message: 'hi' });
    on((e) => e.type === 'assistantText' && chats.stop(h.chatId));
    expect(await h.done).toEqual({ stopReason: 'cancelled' });
    expect(kinds(events).slice(-3)).toEqual(['assistantText', 'status:stopping', 'turnEnded:cancelled']);
  });

  it('the output token limit ends the turn with max_tokens', async () => {
    const { chats } = setup([{ events: [text('cut o'), finish('length')] }]);
    expect(await chats.prompt({ message: 'hi' }).done).toEqual({ stopReason: 'max_tokens' });
  });

  it('a refusal (or content filter) ends the turn with refusal', async () => {
    const { chats } = setup([{ events: [finish('refusal')] }]);
    expect(await chats.prompt({ message: 'hi' }).done).toEqual({ stopReason: 'refusal' });
  });

  it('a model error ends the turn with error and its message, shown as an error event', async () => {
    const { chats, events } = setup([{ events: [text('a')], fail: new LlmError('fake: bad request', 400, false) }]);
    const done = await chats.prompt({ message: 'hi' }).done;
    expect(done).toEqual({ stopReason: 'error', error: 'Error from fake/m: fake: bad request' });
    expect(events.at(-2)).toEqual({ type: 'error', text: 'Error from fake/m: fake: bad request' });
  });

  it('no model configured: the turn ends with error at once', async () => {
    const { chats, events } = setup([]);
    const h = new ChatService({ ...(chats as unknown as { deps: ChatDeps }).deps, models: () => [], defaultModel: () => undefined }, new CommandRegistry()).prompt({ message: 'hi' });
    expect(h.status).toBe('noModel');
    const done = await h.done;
    expect(done.stopReason).toBe('error');
    expect(done.error).toMatch(/No LLM is configured/);
    expect(kinds(events)).toEqual(['error', 'turnEnded:error']);
  });

  it('a tool call that asks and is approved runs, and the turn goes on to its answer', async () => {
    const { chats, events, on, store } = setup([{ events: callTool('t1', 'write_note') }, { events: [text('done'), finish('stop')] }], [tool('write_note', { readOnly: false })]);
    const h = chats.prompt({ message: 'hi' });
    on((e) => e.type === 'toolCall' && e.state === 'announced' && e.needsApproval && chats.approve(h.chatId, e.id));
    expect(await h.done).toEqual({ stopReason: 'end_turn' });
    const calls = kinds(events).filter((k) => k.startsWith('toolCall'));
    expect(calls).toEqual(['toolCall:preparing', 'toolCall:preparing', 'toolCall:announced', 'toolCall:running', 'toolCall:done']);
    expect(events.find((e) => e.type === 'toolCall' && e.state === 'done')).toMatchObject({
      id: 't1',
      name: 'write_note',
      server: 'patchbay',
      error: false,
      outputs: [{ type: 'text', text: 'write_note ran' }],
    });
    expect(store.messages(h.chatId).find((m) => m.role === 'tool')).toMatchObject({ outcome: 'called', llmText: 'write_note ran' });
  });

  it('a rejected tool call does not run; the model is told and the turn ends normally', async () => {
    let ran = false;
    const note = tool('write_note', { readOnly: false, call: async () => ((ran = true), { error: false, outputs: [] }) });
    const { chats, events, on } = setup([{ events: callTool('t1', 'write_note') }, { events: [text('ok'), finish('stop')] }], [note]);
    const h = chats.prompt({ message: 'hi' });
    on((e) => e.type === 'toolCall' && e.state === 'announced' && chats.reject(h.chatId, e.id));
    expect(await h.done).toEqual({ stopReason: 'end_turn' });
    expect(ran).toBe(false);
    expect(events.find((e) => e.type === 'toolCall' && e.state === 'rejected')).toMatchObject({ id: 't1', reason: 'user' });
  });

  it('a stop while a call waits for approval settles the approval and cancels the turn', async () => {
    const { chats, events, on } = setup([{ events: callTool('t1', 'write_note') }], [tool('write_note', { readOnly: false })]);
    const h = chats.prompt({ message: 'hi' });
    on((e) => e.type === 'toolCall' && e.state === 'announced' && chats.stop(h.chatId));
    expect(await h.done).toEqual({ stopReason: 'cancelled' });
    expect(kinds(events).slice(-4)).toEqual(['toolCall:announced', 'status:stopping', 'toolCall:rejected', 'turnEnded:cancelled']);
    expect(events.find((e) => e.type === 'toolCall' && e.state === 'rejected')).toMatchObject({ reason: 'stopped' });
  });

  it('a tool that ignores its abort signal is reported stopping and the turn ends cancelled without it; its late result is stored', async () => {
    let release!: (r: ToolResult) => void;
    const stubborn = tool('slow_read', { readOnly: true, call: () => new Promise((r) => (release = r)) });
    const { chats, events, on, store } = setup([{ events: callTool('t1', 'slow_read') }], [stubborn]);
    const h = chats.prompt({ message: 'hi' });
    on((e) => e.type === 'toolCall' && e.state === 'running' && chats.stop(h.chatId));
    expect(await h.done).toEqual({ stopReason: 'cancelled' });
    expect(kinds(events).slice(-3)).toEqual(['status:stopping', 'toolCall:stopping', 'turnEnded:cancelled']);
    const placeholder = store.messages(h.chatId).find((m) => m.role === 'tool');
    expect(placeholder).toMatchObject({ outcome: 'called', error: true });

    // The tool returns at last: its result replaces the placeholder; no new turn starts.
    release({ error: false, outputs: [{ type: 'text', text: 'late' }] });
    await new Promise((r) => setImmediate(r));
    expect(kinds(events).slice(-2)).toEqual(['turnEnded:cancelled', 'toolCall:done']);
    const stored = store.messages(h.chatId).filter((m) => m.role === 'tool');
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ outcome: 'called', error: false, llmText: 'late' });
  });

  it('a late result that arrives after the store closed (shutdown) is logged, not an unhandled rejection', async () => {
    let release!: (r: ToolResult) => void;
    const stubborn = tool('slow_read', { readOnly: true, call: () => new Promise((r) => (release = r)) });
    const { chats, on, store } = setup([{ events: callTool('t1', 'slow_read') }], [stubborn]);
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const h = chats.prompt({ message: 'hi' });
      on((e) => e.type === 'toolCall' && e.state === 'running' && chats.stop(h.chatId));
      expect(await h.done).toEqual({ stopReason: 'cancelled' });
      store.close();
      release({ error: false, outputs: [{ type: 'text', text: 'late' }] });
      await new Promise((r) => setTimeout(r, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('a front end that cannot ask has a call that would ask refused at once; the turn goes on', async () => {
    let ran = false;
    const note = tool('write_note', { readOnly: false, call: async () => ((ran = true), { error: false, outputs: [] }) });
    const { chats, events } = setup([{ events: callTool('t1', 'write_note') }, { events: [text('ok'), finish('stop')] }], [note], { canAsk: false, canShowDiffs: false });
    const h = chats.prompt({ message: 'hi' });
    expect(await h.done).toEqual({ stopReason: 'end_turn' });
    expect(ran).toBe(false);
    expect(events.find((e) => e.type === 'toolCall' && e.state === 'rejected')).toMatchObject({ id: 't1', reason: 'denied' });
  });

  it('a front end that shows no diffs is not sent a preview; one that does gets the details before approval', async () => {
    const withPreview = (): Tool => ({
      ...tool('edit_note', { readOnly: false }),
      preview: async () => ({ type: 'fileChange', path: '/x', diff: '-a\n+b', linesAdded: 1, linesRemoved: 1 }),
    });
    for (const canShowDiffs of [false, true]) {
      const { chats, events, on } = setup([{ events: callTool('t1', 'edit_note') }, { events: [text('ok'), finish('stop')] }], [withPreview()], { canAsk: true, canShowDiffs });
      const h = chats.prompt({ message: 'hi' });
      on((e) => e.type === 'toolCall' && e.state === 'announced' && chats.approve(h.chatId, e.id, false));
      expect(await h.done).toEqual({ stopReason: 'end_turn' });
      const announced = events.find((e) => e.type === 'toolCall' && e.state === 'announced');
      expect(announced && 'details' in announced ? announced.details : undefined, `canShowDiffs ${canShowDiffs}`).toEqual(canShowDiffs ? expect.objectContaining({ type: 'fileChange' }) : undefined);
    }
  });
});

/** The user messages of one model request, in order. */
const userTexts = (req: LlmRequest | undefined): string[] => (req?.messages ?? []).flatMap((m) => (m.role === 'user' ? [m.content] : []));
const userEvents = (events: ChatEvent[]) => events.filter((e) => e.type === 'userMessage');
/** Lets queued work (a prompt the service might start on its own) run before asserting it did not. */
const settle = () => new Promise((r) => setTimeout(r, 30));

// ECA's contract (eca docs/protocol.md "Chat steer prompt", chat.clj `prompt-steer`,
// `prompt-steer-remove`, `consume-steer-message!`; lifecycle.clj `finish-chat-prompt!`).
describe('ChatService steering', () => {
  it('a steer joins the next model step once, as a user message with an id of its own; later steers join it by a newline', async () => {
    const { chats, events, requests, on } = setup([{ events: callTool('t1', 'read_note') }, { events: [text('ok'), finish('stop')] }], [tool('read_note', { readOnly: true })]);
    const h = chats.prompt({ message: 'hi', contentId: 'c1' });
    on((e) => {
      if (e.type !== 'toolCall' || e.state !== 'running') return;
      chats.steer(h.chatId, 'also b');
      chats.steer(h.chatId, 'and c');
    });
    expect(await h.done).toEqual({ stopReason: 'end_turn' });
    await settle();
    expect(requests.map(userTexts)).toEqual([['hi'], ['hi', 'also b\nand c']]);
    const users = userEvents(events);
    expect(users).toEqual([
      { type: 'userMessage', text: 'hi', id: 'c1' },
      { type: 'userMessage', text: 'also b\nand c', id: expect.any(String) },
    ]);
    expect(users[1]).not.toMatchObject({ id: 'c1' });
    expect(kinds(events).filter((k) => k.startsWith('turnEnded'))).toEqual(['turnEnded:end_turn']);
  });

  it('a steer the model never read is dropped when the turn ends, not run as a prompt (the client sends it again)', async () => {
    const { chats, events, requests, steps, on } = setup([{ events: [text('answer'), finish('stop')] }, { events: [text('next'), finish('stop')] }]);
    const h = chats.prompt({ message: 'hi' });
    on((e) => e.type === 'assistantText' && chats.steer(h.chatId, 'leftover'));
    await h.done;
    on(() => {});
    await settle();
    expect(requests).toHaveLength(1);
    expect(steps).toHaveLength(1);
    expect(userEvents(events).map((e) => e.text)).toEqual(['hi']);
    await chats.prompt({ chatId: h.chatId, message: 'go on' }).done;
    expect(userTexts(requests[1])).toEqual(['hi', 'go on']);
  });

  it('removeSteer takes back a steer not yet read; injected events stay, and removing twice is harmless', async () => {
    const { chats, events, requests, on } = setup([{ events: callTool('t1', 'read_note') }, { events: [text('ok'), finish('stop')] }], [tool('read_note', { readOnly: true })]);
    const h = chats.prompt({ message: 'hi' });
    on((e) => {
      if (e.type !== 'toolCall' || e.state !== 'running') return;
      chats.steer(h.chatId, 'never mind');
      chats.inject(h.chatId, 'build failed', false);
      chats.removeSteer(h.chatId);
      chats.removeSteer(h.chatId);
      chats.removeSteer('no-such-chat');
    });
    await h.done;
    expect(userTexts(requests[1])).toEqual(['hi', 'build failed']);
    expect(userEvents(events).map((e) => e.text)).toEqual(['hi', 'build failed']);
  });

  it('a steer to an idle, stopping or unknown chat, or a blank one, is ignored', async () => {
    const { chats, events, requests, steps, on } = setup([{ events: [text('a')], hang: true }, { events: [text('b'), finish('stop')] }, { events: [text('c'), finish('stop')] }]);
    const h = chats.prompt({ message: 'hi' });
    on((e) => {
      if (e.type !== 'assistantText') return;
      chats.steer(h.chatId, '  \n');
      chats.stop(h.chatId);
      chats.steer(h.chatId, 'while stopping');
    });
    expect(await h.done).toEqual({ stopReason: 'cancelled' });
    on(() => {});
    const before = events.length;
    chats.steer(h.chatId, 'while idle');
    chats.steer('no-such-chat', 'anyone?');
    await settle();
    expect(events.slice(before)).toEqual([]);
    expect(steps).toHaveLength(2);
    await chats.prompt({ chatId: h.chatId, message: 'next' }).done;
    expect(userTexts(requests[1])).toEqual(['hi', 'next']);
  });
});

describe('ChatService subagents', () => {
  // The parent's stop can arrive between `startSubagent` and the child's queued turn (core/subagents/runner.ts stops the child then).
  it('a child stopped before its turn began never starts: cancelled, no model request', async () => {
    const { chats, requests, on } = setup([{ events: [text('thinking')], hang: true }]);
    const parent = chats.prompt({ message: 'go' });
    await new Promise<void>((resolve) => on((e) => e.type === 'assistantText' && resolve()));
    const started = chats.startSubagent({ id: 'subagent-q1', parentId: parent.chatId, def: BUILT_IN_SUBAGENTS[0], task: 'look', onStep: () => {} });
    if ('error' in started) throw new Error(started.error);
    chats.stop('subagent-q1');
    expect(await started.done).toEqual({ stopReason: 'cancelled' });
    expect(requests).toHaveLength(1);
    chats.stop(parent.chatId);
    expect(await parent.done).toEqual({ stopReason: 'cancelled' });
  });
});

describe('ChatService with a model whose context window is small', () => {
  /** The real tools whose definitions fill a small window: the native ones (with background jobs), spawn_agent and the LSP tools. */
  function realTools(): Tool[] {
    const jobs = new JobRegistry();
    cleanups.push(() => void jobs.dispose());
    const lsp = new LspHostImpl({ servers: {}, roots: [tmpdir()], env: { PATH: '' } });
    cleanups.push(() => void lsp.dispose());
    const chats = { hasChat: () => false, isSubagent: () => false, modelOf: () => undefined } as unknown as SpawnAgentOptions['chats'];
    return [...nativeTools({ jobs }), spawnAgentTool({ defs: () => [...BUILT_IN_SUBAGENTS], chats, maxParallel: () => 2 }), ...lsp.tools()];
  }
  const withWindow = (context: number | undefined): ModelEntry => ({ ...MODEL, ...(context ? { limit: { context, output: 2048 } } : {}) });
  const offered = async (model: ModelEntry) => {
    const { chats, requests } = setup([{ events: [text('ok'), finish('stop')] }], realTools(), undefined, model);
    await chats.prompt({ message: 'hi' }).done;
    return requests[0];
  };

  it('under 16k tokens: no spawn_agent, no background jobs, no LSP tools, and shell_command without `background`; the system prompt names only what is offered', async () => {
    const req = await offered(withWindow(8192));
    const names = req.tools.map((t) => t.name);
    expect(names).toContain('patchbay__shell_command');
    expect(names).toContain('patchbay__read_file');
    expect(names.filter((n) => /spawn_agent|bg_job|lsp_/.test(n))).toEqual([]);
    const shell = req.tools.find((t) => t.name === 'patchbay__shell_command')!;
    expect(Object.keys((shell.parameters as { properties: object }).properties)).toEqual(['command', 'working_directory', 'timeout', 'sandbox']);
    expect(shell.description).not.toMatch(/background|bg_job/i);
    expect(req.system).toContain('patchbay__shell_command');
    expect(req.system).not.toMatch(/spawn_agent|bg_job|lsp_/);
  });

  it('at 16k tokens, or with no known window: every tool as it is', async () => {
    for (const context of [16_384, undefined]) {
      const names = (await offered(withWindow(context))).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['patchbay__spawn_agent', 'patchbay__bg_job', 'patchbay__lsp_hover', 'patchbay__shell_command']));
      const shell = (await offered(withWindow(context))).tools.find((t) => t.name === 'patchbay__shell_command')!;
      expect(Object.keys((shell.parameters as { properties: object }).properties)).toContain('background');
    }
  });

  it("the usage event reports the context window the client says the request had (a local model sized to its prompt), over the model's limit", async () => {
    const usage = (contextWindow?: number): LlmEvent => ({ type: 'usage', inputTokens: 6000, outputTokens: 100, ...(contextWindow ? { contextWindow } : {}) });
    for (const [window, expected] of [
      [12_288, 12_288],
      [undefined, 8192],
    ] as const) {
      const { chats, events } = setup([{ events: [text('ok'), usage(window), finish('stop')] }], [], undefined, withWindow(8192));
      await chats.prompt({ message: 'hi' }).done;
      const u = events.find((e) => e.type === 'usage');
      expect(u).toMatchObject({ contextTokens: 6100, limit: { context: expected, output: 2048 }, context: { usedTokens: 6100, contextLimit: expected } });
    }
  });
});
