/**
 * `chat/open` replay time (issue 28, point 6): the real `patchbay server` over stdio opens a stored
 * 200-message chat with 50 tool calls (50 turns: the question, a text and a read_file call, its
 * result, the answer) and is timed from the request to its answer, which comes after the whole
 * replay (server/eca/eca-open.ts). Measured alongside in the same server: a 200-message chat of text
 * only (100 questions and answers), so the ratio is what the calls' stages add. Opens alternate
 * between the two chats so both see the same machine.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeLlm } from '../test/fixtures/fake-llm.js';
import { now, Server, summarize, tempDir, type Msg, type Summary } from './util.js';

export const REPLAY_TARGET_MS = 100;
const CALL_TURNS = 50;
const TEXT_TURNS = 100;
const OPENS = 30;
const WARM = 3;

export interface ReplayRun {
  calls: number;
  withCalls: Summary;
  textOnly: Summary;
  /** Contents one open of each chat sends. */
  contentsWithCalls: number;
  contentsTextOnly: number;
}

const finished = (chatId: string | undefined) => (m: Msg) =>
  m.method === 'chat/contentReceived' && (chatId === undefined || m.params?.chatId === chatId) && m.params?.content?.type === 'progress' && m.params.content.state === 'finished';

/** Prompts `turns` times into one chat, each answered as `reply(turn)` scripts; returns the chat id. */
async function fill(s: Server, fake: FakeLlm, turns: number, reply: (turn: number) => void): Promise<string> {
  let chatId: string | undefined;
  for (let turn = 1; turn <= turns; turn++) {
    reply(turn);
    const done = s.waitFor(finished(chatId), `turn ${turn} to end`);
    const res = await s.request('chat/prompt', { ...(chatId ? { chatId } : {}), message: `Question ${turn}: what does mod${turn}.ts do?` });
    chatId ??= (res.msg.result as { chatId: string }).chatId;
    await done;
  }
  return chatId!;
}

/** One `chat/open`: request → answer, in ms, and the contents it replayed. */
async function open(s: Server, chatId: string): Promise<{ ms: number; contents: number }> {
  let contents = 0;
  const off = s.listen((m) => {
    if (m.method === 'chat/contentReceived' && m.params?.chatId === chatId) contents++;
  });
  const t0 = now();
  const res = await s.request('chat/open', { chatId });
  off();
  return { ms: res.t - t0, contents };
}

export async function runReplay(log: (s: string) => void): Promise<ReplayRun> {
  const root = tempDir('pb-bench-replay-ws-');
  for (let i = 1; i <= CALL_TURNS; i++) writeFileSync(join(root, `mod${i}.ts`), `export const m${i} = ${i};\n`.repeat(20));
  const fake = await FakeLlm.start();
  const s = new Server({
    home: tempDir('pb-bench-replay-'),
    env: { PATCHBAY_LOCAL_MODEL: 'off' },
    config: {
      providers: { fake: { api: 'openai-chat', url: `${fake.url}/v1`, key: 'x', models: { m1: {} } } },
      defaultModel: 'fake/m1',
      chat: { generateTitles: false },
      gateway: { port: 0 },
    },
  });
  try {
    await s.handshake(root);
    const withCalls = await fill(s, fake, CALL_TURNS, (turn) =>
      fake.script(
        [{ text: `Let me read mod${turn}.ts.` }, { toolCall: { id: `call_${turn}`, name: 'patchbay__read_file', args: { path: `mod${turn}.ts` } } }],
        [{ text: `mod${turn}.ts exports one constant, ${turn}, twenty times.` }],
      ),
    );
    const textOnly = await fill(s, fake, TEXT_TURNS, (turn) => fake.script([{ text: `mod${turn}.ts exports one constant, ${turn}, twenty times.` }]));
    const a: number[] = [];
    const b: number[] = [];
    let contentsWithCalls = 0;
    let contentsTextOnly = 0;
    for (let i = 0; i < WARM + OPENS; i++) {
      const x = await open(s, withCalls);
      const y = await open(s, textOnly);
      contentsWithCalls = x.contents;
      contentsTextOnly = y.contents;
      if (i < WARM) continue;
      a.push(x.ms);
      b.push(y.ms);
    }
    log(`  ${OPENS} opens each: ${contentsWithCalls} contents with ${CALL_TURNS} calls, ${contentsTextOnly} text only`);
    return { calls: CALL_TURNS, withCalls: summarize(a), textOnly: summarize(b), contentsWithCalls, contentsTextOnly };
  } finally {
    await s.stop();
    await fake.close();
  }
}
