/**
 * `patchbay chat`'s view of a turn's end: the `progress finished` content and its `stopReason`
 * (a patchbay extension), never the text of a message. The server here is a stand-in that
 * answers `chat/prompt` and lets the test send contents.
 */
import { describe, expect, it } from 'vitest';
import type { ServerProcess } from '../../src/cli/chat-client.js';
import { Renderer } from '../../src/cli/chat-render.js';
import { ChatSession, type TurnOutcome } from '../../src/cli/chat-session.js';
import { Term } from '../../src/cli/chat-term.js';

function session() {
  let onContent: ((raw: unknown) => void) | undefined;
  const server = {
    conn: { onNotification: (_method: string, h: (raw: unknown) => void) => void (onContent = h) },
    request: async (_method: string, params: { chatId: string }) => ({ chatId: params.chatId, model: 'fake/m1', status: 'prompting' }),
    notify: () => {},
    config: {},
    exited: new Promise(() => {}),
  } as unknown as ServerProcess;
  const out: string[] = [];
  const stream = { write: (s: string) => (out.push(s), true), isTTY: false };
  const chat = new ChatSession(server, new Renderer(new Term(stream, stream, {}), '/tmp'), async () => 'no');
  const send = (content: Record<string, unknown>, role = 'system') => onContent!({ chatId: chat.chatId, role, content });
  return { chat, send, out };
}

/** Sends a prompt, lets the test play the server's contents, and returns the outcome. */
async function turn(contents: (send: (c: Record<string, unknown>, role?: string) => void) => void, out: string[] = []): Promise<TurnOutcome> {
  const s = session();
  const outcome = s.chat.send('hi', []);
  await new Promise((r) => setImmediate(r));
  contents(s.send);
  const o = await outcome;
  out.push(...s.out);
  return o;
}

describe('ChatSession: how a turn ended', () => {
  it('stopReason cancelled makes the turn a stopped one', async () => {
    const o = await turn((send) => {
      send({ type: 'text', text: 'partial' }, 'assistant');
      send({ type: 'progress', state: 'finished', text: '', stopReason: 'cancelled' });
    });
    expect(o).toMatchObject({ kind: 'done', stopped: true });
  });

  it('the stop text alone does not: only the stop reason says so', async () => {
    const o = await turn((send) => {
      send({ type: 'text', text: '\nPrompt stopped' });
      send({ type: 'progress', state: 'finished', text: '', stopReason: 'end_turn' });
    });
    expect(o).toMatchObject({ kind: 'done', stopped: false });
  });

  it('stopReason error fails the turn with the text the server marked as its reason', async () => {
    const out: string[] = [];
    const o = await turn((send) => {
      send({ type: 'text', text: 'Stopped after 50 model steps without a final answer.', error: true });
      send({ type: 'progress', state: 'finished', text: '', stopReason: 'error' });
    }, out);
    expect(o).toMatchObject({ kind: 'done', errors: ['Stopped after 50 model steps without a final answer.'] });
  });

  it('stopReason error fails the turn even when no text was marked (an older server)', async () => {
    const o = await turn((send) => {
      send({ type: 'text', text: 'something went wrong' });
      send({ type: 'progress', state: 'finished', text: '', stopReason: 'error' });
    });
    expect(o).toMatchObject({ kind: 'done', errors: ['the turn failed'] });
  });

  it('a text that reads like an error does not fail a turn that ended normally', async () => {
    const o = await turn((send) => {
      send({ type: 'text', text: 'Error from somewhere: quoted by the user' });
      send({ type: 'progress', state: 'finished', text: '', stopReason: 'end_turn' });
    });
    expect(o).toMatchObject({ kind: 'done', errors: [] });
  });

  it('a finished content without stopReason (an older server) ends the turn as a normal end', async () => {
    const o = await turn((send) => {
      send({ type: 'text', text: 'answer' }, 'assistant');
      send({ type: 'progress', state: 'finished', text: '' });
    });
    expect(o).toMatchObject({ kind: 'done', stopped: false, errors: [] });
  });

  it('an answer cut off at the output limit, or refused, says so after it', async () => {
    for (const [reason, note] of [
      ['max_tokens', 'The answer was cut off: the model reached its output token limit.'],
      ['refusal', 'The model declined to answer.'],
    ]) {
      const out: string[] = [];
      await turn((send) => {
        send({ type: 'text', text: 'Some answ' }, 'assistant');
        send({ type: 'progress', state: 'finished', text: '', stopReason: reason });
      }, out);
      expect(out.join('')).toContain(`Some answ\n${note}\n`);
    }
    const out: string[] = [];
    await turn((send) => send({ type: 'progress', state: 'finished', text: '', stopReason: 'end_turn' }), out);
    expect(out.join('')).not.toMatch(/cut off|declined/);
  });

  it('an unknown stop reason still ends the turn (the field is not an enum on the client)', async () => {
    const o = await turn((send) => send({ type: 'progress', state: 'finished', text: '', stopReason: 'something_new' }));
    expect(o).toMatchObject({ kind: 'done', stopped: false });
  });
});

describe('ChatSession: a subagent of the chat', () => {
  it("its approval question is answered in its own chat, and its turn's end does not end the parent's", async () => {
    let onContent: ((raw: unknown) => void) | undefined;
    const notified: Array<[string, unknown]> = [];
    const server = {
      conn: { onNotification: (_method: string, h: (raw: unknown) => void) => void (onContent = h) },
      request: async (_method: string, params: { chatId: string }) => ({ chatId: params.chatId, model: 'fake/m1', status: 'prompting' }),
      notify: (entry: { method: string }, params: unknown) => void notified.push([entry.method, params]),
      config: {},
      exited: new Promise(() => {}),
    } as unknown as ServerProcess;
    const stream = { write: () => true, isTTY: false };
    const chat = new ChatSession(server, new Renderer(new Term(stream, stream, {}), '/tmp'), async () => 'yes');
    const outcome = chat.send('hi', []);
    await new Promise((r) => setImmediate(r));
    const child = { chatId: 'subagent-s1', parentChatId: chat.chatId };
    onContent!({ ...child, role: 'assistant', content: { type: 'toolCallRun', origin: 'native', id: 'c1', name: 'shell_command', server: 'eca', arguments: { command: 'ls' }, manualApproval: true } });
    onContent!({ ...child, role: 'system', content: { type: 'progress', state: 'finished', text: '', stopReason: 'end_turn' } });
    await expect.poll(() => notified).toEqual([['chat/toolCallApprove', { chatId: 'subagent-s1', toolCallId: 'c1' }]]);
    let ended = false;
    void outcome.then(() => (ended = true));
    await new Promise((r) => setImmediate(r));
    expect(ended).toBe(false);
    onContent!({ chatId: chat.chatId, role: 'system', content: { type: 'progress', state: 'finished', text: '', stopReason: 'end_turn' } });
    expect(await outcome).toMatchObject({ kind: 'done' });
  });
});
