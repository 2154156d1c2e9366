/**
 * Inline completion and rewrite in core (src/core/assist/), with the runtime's deps scripted: what
 * reaches the model (which model, how much of the document, how much reasoning), and how a run
 * ends when the server closes, the model runs on, or the rewrite takes too long. The e2e tests
 * (test/e2e/inline-completion.test.ts, rewrite.test.ts) cover the same paths over the real binary
 * where a fake server can reach them in test time.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InlineCompleter, Rewriter, type AssistDeps, type RewriteEvent } from '../../src/core/assist/index.js';
import { configSchema } from '../../src/config/schema.js';
import type { LlmClient, LlmEvent, LlmRequest, ModelEntry } from '../../src/shapes/llm.js';

const model = (name: string, extra: Partial<ModelEntry> = {}): ModelEntry => ({ id: `openai/${name}`, provider: 'openai', api: 'openai-responses', modelName: name, url: 'http://x', ...extra });

interface Scripted {
  deps: AssistDeps;
  requests: LlmRequest[];
}

/** Deps whose model answers with `answer(req)`'s events; `models[0]` is the default. */
function scripted(models: ModelEntry[], answer: (req: LlmRequest) => AsyncIterable<LlmEvent>, config: Record<string, unknown> = {}): Scripted {
  const requests: LlmRequest[] = [];
  const cfg = configSchema.parse(config);
  const deps: AssistDeps = {
    config: () => cfg,
    roots: () => [],
    models: () => models,
    defaultModel: () => models[0],
    clientFor: async () => ({}) as LlmClient,
    stream: (_c, req) => {
      requests.push(req);
      return answer(req);
    },
  };
  return { deps, requests };
}

async function* say(...events: LlmEvent[]): AsyncIterable<LlmEvent> {
  for (const e of events) yield e;
}

/** Text pieces until the request's signal aborts (a model that never stops). */
async function* endless(req: LlmRequest): AsyncIterable<LlmEvent> {
  while (!req.signal.aborted) {
    yield { type: 'text', text: 'x'.repeat(8192) };
    await new Promise((r) => setImmediate(r));
  }
  throw req.signal.reason;
}

/** Nothing until the request's signal aborts. */
async function* silent(req: LlmRequest): AsyncIterable<LlmEvent> {
  await new Promise((_, reject) => req.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));
  yield { type: 'text', text: 'never' };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('InlineCompleter', () => {
  it("with no completion.model, a reasoning default (gpt-5) gives way to ECA's gpt-4.1 of the same provider", async () => {
    const s = scripted([model('gpt-5'), model('gpt-5-mini'), model('gpt-4.1')], () => say({ type: 'text', text: 'a' }));
    const r = await new InlineCompleter(s.deps).complete({ text: 'x', line: 0, character: 1 });
    expect(r.model).toBe('openai/gpt-4.1');
    expect(s.requests[0].model).toBe('gpt-4.1');
    expect(s.requests[0].payload).toBeUndefined();
  });

  it('a reasoning model that stays (the only one, or configured) is asked for minimal reasoning; extraPayload wins over it', async () => {
    const only = scripted([model('gpt-5')], () => say({ type: 'text', text: 'a' }));
    await new InlineCompleter(only.deps).complete({ text: 'x', line: 0, character: 1 });
    expect(only.requests[0].payload).toEqual({ reasoning: { effort: 'minimal' } });

    const chat = scripted([model('o4-mini', { api: 'openai-chat', extraPayload: { temperature: 0 } })], () => say({ type: 'text', text: 'a' }));
    await new InlineCompleter(chat.deps).complete({ text: 'x', line: 0, character: 1 });
    expect(chat.requests[0].payload).toEqual({ reasoning_effort: 'low', temperature: 0 });

    const withNone = scripted(
      [model('gpt-4.1'), model('gpt-5.2', { variants: { none: { reasoning: { effort: 'none' } } }, extraPayload: { reasoning: { effort: 'low' } } })],
      () => say({ type: 'text', text: 'a' }),
      {
        completion: { model: 'openai/gpt-5.2' },
      },
    );
    await new InlineCompleter(withNone.deps).complete({ text: 'x', line: 0, character: 1 });
    expect(withNone.requests[0].model).toBe('gpt-5.2');
    expect(withNone.requests[0].payload).toEqual({ reasoning: { effort: 'low' } });
  });

  it('an empty answer cut at the output limit is an error that says why, not an empty completion', async () => {
    const s = scripted([model('gpt-5')], () => say({ type: 'reasoningStart', id: 'r' }, { type: 'finish', reason: 'length' }));
    await expect(new InlineCompleter(s.deps).complete({ text: 'x', line: 0, character: 1 })).rejects.toMatchObject({
      code: 'llm',
      message: expect.stringContaining('output tokens without answering'),
    });
    // An empty answer that simply stopped is still no completion, not an error.
    const done = scripted([model('gpt-4.1')], () => say({ type: 'finish', reason: 'stop' }));
    await expect(new InlineCompleter(done.deps).complete({ text: 'x', line: 0, character: 1 })).resolves.toMatchObject({ text: '' });
  });

  it('sends the last 16 KB before the cursor and the first 4 KB after it, cut at line starts and ends', async () => {
    const line = `${'a'.repeat(99)}\n`; // 100 characters a line
    const doc = `${line.repeat(1000)}CURSOR_LINE${line.repeat(1000)}`;
    const s = scripted([model('gpt-4.1')], () => say({ type: 'text', text: 'z' }));
    await new InlineCompleter(s.deps).complete({ text: doc, line: 1000, character: 6 });
    const user = s.requests[0].messages[0].content as string;
    const [before, after] = user.split('<CURSOR>');
    expect(before).toBe(`${line.repeat(163)}CURSOR`);
    expect(after).toBe(`_LINE${line.repeat(40)}`);
  });

  it("a model's context smaller than the window bounds it further", async () => {
    const doc = `${'b\n'.repeat(20_000)}|${'c\n'.repeat(20_000)}`;
    const s = scripted([model('gpt-4.1', { limit: { context: 2048, output: 256 } })], () => say({ type: 'text', text: 'z' }));
    await new InlineCompleter(s.deps).complete({ text: doc, line: 20_000, character: 1 });
    const [before, after] = (s.requests[0].messages[0].content as string).split('<CURSOR>');
    // (2048 - 256 - 512) tokens × 3 characters: 80 % before, 20 % after.
    expect(before.length).toBeLessThanOrEqual(3072);
    expect(before.length).toBeGreaterThan(3000);
    expect(after.length).toBeLessThanOrEqual(768);
    expect(after.length).toBeGreaterThan(700);
  });

  it('a chat answer past 64 KB stops the call with an error', async () => {
    const s = scripted([model('gpt-4.1')], endless);
    await expect(new InlineCompleter(s.deps).complete({ text: 'x', line: 0, character: 1 })).rejects.toMatchObject({ code: 'llm', message: expect.stringContaining('64 KB') });
    expect(s.requests[0].signal.aborted).toBe(true);
  });

  it('after dispose (the server closing while the request waited for the models) a completion is cancelled without calling the model', async () => {
    const s = scripted([model('gpt-4.1')], () => say({ type: 'text', text: 'a' }));
    const c = new InlineCompleter(s.deps);
    c.dispose();
    await expect(c.complete({ text: 'x', line: 0, character: 1 })).rejects.toMatchObject({ code: 'cancelled' });
    expect(s.requests).toEqual([]);
  });
});

describe('Rewriter', () => {
  const input = { text: 'sel', prompt: 'p', range: { startLine: 1, startCharacter: 1, endLine: 1, endCharacter: 4 } };

  const run = (r: Rewriter): Promise<RewriteEvent[]> =>
    new Promise((resolve) => {
      const got: RewriteEvent[] = [];
      r.start(input, (e) => {
        got.push(e);
        if (e.type === 'finished' || e.type === 'error') resolve(got);
      });
    });

  it('after dispose a rewrite is refused as cancelled and the model is not called', () => {
    const s = scripted([model('gpt-4.1')], () => say({ type: 'text', text: 'a' }));
    const r = new Rewriter(s.deps);
    r.dispose();
    expect(() => r.start(input, () => {})).toThrow(expect.objectContaining({ code: 'cancelled' }));
    expect(s.requests).toEqual([]);
  });

  it('an answer past the cap stops the call and ends with an error', async () => {
    const s = scripted([model('gpt-4.1')], endless);
    const got = await run(new Rewriter(s.deps));
    expect(got.at(-1)).toEqual({ type: 'error', message: expect.stringContaining('ran past 4 MB') });
    expect(s.requests[0].signal.aborted).toBe(true);
  });

  it('a rewrite still going after five minutes is stopped with an error', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const s = scripted([model('gpt-4.1')], silent);
    const ended = run(new Rewriter(s.deps));
    await vi.waitFor(() => expect(s.requests).toHaveLength(1));
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    expect((await ended).at(-1)).toEqual({ type: 'error', message: expect.stringContaining('longer than 5 minutes') });
  });
});
