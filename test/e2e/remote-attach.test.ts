/**
 * A second front end on a running `patchbay server` (issue 30), through ECA's remote API: the
 * editor (ECA over stdio) prompts a turn that streams text and then stops at a tool call that
 * needs approval; a client reads the run file, attaches over SSE after sequence number N, gets
 * exactly the chat's events after N and then the live ones; it lists the pending approval,
 * approves it, and the editor sees the call run and finish. Plus auth over the real listener.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, useTempDirs, workspace } from './harness.js';
import { SseClient, httpRequest, type SseEvent } from '../support/sse-client.js';

const scratch = useTempDirs();
const { llm, track } = useFakeLlmSuite();
const clients: SseClient[] = [];

interface RunFile {
  url: string;
  port: number;
  token: string;
  pid: number;
}

/** The remote API's run file: written once it listens (the listener starts after `initialized`). */
async function runFile(home: string, p: EcaProc): Promise<{ file: string; run: RunFile }> {
  const dir = join(home, '.patchbay', 'remote', 'run');
  for (let i = 0; i < 500; i++) {
    const names = existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith('.json')) : [];
    if (names.length) {
      const file = join(dir, names[0]);
      return { file, run: JSON.parse(readFileSync(file, 'utf8')) as RunFile };
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no remote run file in ${dir}; stderr:\n${p.stderr.slice(-2000)}`);
}

async function boot() {
  const home = scratch(tempDir());
  const root = scratch(workspace({ 'a.txt': 'a\n' }));
  const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url, 'openai-chat', { remote: { enabled: true, port: 0 }, toolCall: { approval: { byDefault: 'ask' } } }) }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === ECA.configUpdated.method);
  const { file, run } = await runFile(home, p);
  const auth = { Authorization: `Bearer ${run.token}` };
  const api = (path: string) => `${run.url}/api/v1${path}`;
  const sse = async (path: string) => {
    const c = await SseClient.open(api(path), auth);
    clients.push(c);
    expect(c.status).toBe(200);
    return c;
  };
  return { home, root, p, file, run, auth, api, sse };
}

/** ECA's SSE name of an editor notification (`chat/contentReceived` → `chat:content-received`). */
const sseName = (method: string) => method.replace('/', ':').replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const seqOf = (e: SseEvent) => Number(e.id!.slice(e.id!.lastIndexOf(':') + 1));

describe('remote API: a second front end on a running server', () => {
  it('replays the running chat after N, follows it live, answers the pending approval, and the editor sees the call answered', async () => {
    const { p, root, file, run, auth, api, sse } = await boot();
    try {
      // The run file is the user's alone.
      if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(run.url).toBe(`http://127.0.0.1:${run.port}`);

      llm().script([{ text: 'Let me ' }, { text: 'write it.' }, { toolCall: { id: 'w1', name: 'patchbay__shell_command', args: { command: 'echo hi > out.txt' } } }], [{ text: 'Written.' }]);
      const chatId: string = (await p.request(ECA.chatPrompt, { message: 'write out.txt' })).result.chatId;
      const run1 = await p.waitFor((m) => m.params?.chatId === chatId && m.params?.content?.type === 'toolCallRun' && m.params.content.id === 'w1', 'the approval to be asked');
      expect(run1.params.content.manualApproval).toBe(true);

      // The chat is waiting: it lists the approval, and says how far its events go.
      const chat = (await httpRequest(api(`/chats/${chatId}`), { headers: auth })).json();
      expect(chat).toMatchObject({ id: chatId, status: 'running' });
      expect(chat.pendingToolCalls).toEqual([
        expect.objectContaining({ id: 'w1', name: 'shell_command', server: 'eca', origin: 'native', arguments: { command: 'echo hi > out.txt' }, manualApproval: true }),
      ]);
      const last: number = chat.lastSeq;
      expect(last).toBeGreaterThan(4);

      // A full replay is what the editor was sent for this chat, notification for notification.
      const full = await sse(`/events?chat=${chatId}&after=0`);
      await full.waitFor((e) => e.id === `${chatId}:${last}`, 'the full replay');
      expect(full.events[0].event).toBe('session:connected');
      expect(full.events[0].data).toMatchObject({ workspaceFolders: [root] });
      const editorSaw = p.messages
        .filter((m) => m.params?.chatId === chatId && (m.method === ECA.chatContentReceived.method || m.method === ECA.chatStatusChanged.method))
        .map((m) => [sseName(m.method!), m.params]);
      expect(full.events.slice(1).map((e) => [e.event, e.data])).toEqual(editorSaw);
      const fullIds = full.events.flatMap((e) => (e.id ? [seqOf(e)] : []));
      expect(fullIds).toEqual(Array.from({ length: last }, (_, i) => i + 1));

      // From N: exactly what followed N in the full replay.
      const n = 2;
      const after = await sse(`/events?chat=${chatId}&after=${n}`);
      await after.waitFor((e) => e.id === `${chatId}:${last}`, `the replay after ${n}`);
      const cut = full.events.findIndex((e) => e.id === `${chatId}:${n}`);
      expect(after.events.slice(1)).toEqual(full.events.slice(cut + 1));

      // The second front end approves; the first (the editor) sees the call answered.
      const ok = await httpRequest(api(`/chats/${chatId}/approve/w1`), { method: 'POST', headers: auth });
      expect(ok.status).toBe(204);
      const running = await p.waitFor((m) => m.params?.chatId === chatId && m.params?.content?.type === 'toolCallRunning' && m.params.content.id === 'w1', 'the editor to see the call running');
      const called = await p.waitFor((m) => m.params?.chatId === chatId && m.params?.content?.type === 'toolCalled' && m.params.content.id === 'w1', 'the editor to see the call done');
      expect(running.params.content.name).toBe('shell_command');
      expect(called.params.content.error).toBe(false);
      await p.turnDone(chatId);
      expect(readFileSync(join(root, 'out.txt'), 'utf8')).toBe('hi\n');

      // The SSE client got the rest live: the same as the editor, numbered on with no gap or repeat.
      const done = (e: SseEvent) => e.event === 'chat:content-received' && (e.data as any).content.type === 'progress' && (e.data as any).content.state === 'finished';
      await after.waitFor(done, 'the turn end on the stream');
      const liveStart = after.events.findIndex((e) => e.id === `${chatId}:${last}`) + 1;
      const live = after.events.slice(liveStart).filter((e) => e.event !== 'chat:answered');
      const editorLive = p.messages
        .slice(p.messages.indexOf(running))
        .filter((m) => m.params?.chatId === chatId && (m.method === ECA.chatContentReceived.method || m.method === ECA.chatStatusChanged.method))
        .map((m) => [sseName(m.method!), m.params]);
      expect(live.map((e) => [e.event, e.data])).toEqual(editorLive);
      expect(live.map((e) => (e.data as any).content?.type)).toEqual(expect.arrayContaining(['toolCallRunning', 'toolCalled', 'text']));
      const ids = after.events.flatMap((e) => (e.id ? [seqOf(e)] : []));
      expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => n + 1 + i));
      expect(ids.at(-1)).toBeGreaterThan(last);
      // The port told the stream who answered.
      expect(after.events.find((e) => e.event === 'chat:answered')?.data).toEqual({ chatId, kind: 'approval', id: 'w1', by: 'remote' });

      // Answered: no longer pending, and a second answer loses.
      expect((await httpRequest(api(`/chats/${chatId}`), { headers: auth })).json().pendingToolCalls).toEqual([]);
      const again = await httpRequest(api(`/chats/${chatId}/reject/w1`), { method: 'POST', headers: auth });
      expect(again.status).toBe(409);
      expect(again.json().error.code).toBe('tool_call_not_pending');
    } finally {
      for (const c of clients.splice(0)) c.close();
    }
  });

  it('the editor answers first: the remote stream is told who answered, and the remote answer loses (409)', async () => {
    const { p, auth, api, sse } = await boot();
    try {
      llm().script([{ toolCall: { id: 'w2', name: 'patchbay__shell_command', args: { command: 'echo two > two.txt' } } }], [{ text: 'ok' }]);
      const chatId: string = (await p.request(ECA.chatPrompt, { message: 'write two.txt' })).result.chatId;
      await p.waitFor((m) => m.params?.chatId === chatId && m.params?.content?.type === 'toolCallRun' && m.params.content.id === 'w2', 'the approval to be asked');
      const c = await sse(`/events?chat=${chatId}`);
      await c.waitFor((e) => e.event === 'session:connected');
      p.notify(ECA.chatToolCallReject, { chatId, toolCallId: 'w2' });
      const answered = await c.waitFor((e) => e.event === 'chat:answered', 'the answered notice');
      expect(answered.data).toEqual({ chatId, kind: 'approval', id: 'w2', by: 'eca' });
      await c.waitFor((e) => (e.data as any)?.content?.type === 'toolCallRejected', 'the rejection on the stream');
      const late = await httpRequest(api(`/chats/${chatId}/approve/w2`), { method: 'POST', headers: auth });
      expect(late.status).toBe(409);
      expect(late.json().error.code).toBe('tool_call_not_pending');
      await p.turnDone(chatId);
      // Nothing ran it.
      expect(p.contents(chatId).some((x) => x.content.type === 'toolCallRunning')).toBe(false);
    } finally {
      for (const c of clients.splice(0)) c.close();
    }
  });

  it('auth: health without a token; no token or a wrong one is 401 with ECA’s body; the right one passes; the token is never logged; the run file goes at exit', async () => {
    const { home, p, file, run, api } = await boot();
    try {
      const health = await httpRequest(api('/health'));
      expect(health.status).toBe(200);
      expect(health.json().status).toBe('ok');
      for (const headers of <Array<Record<string, string>>>[{}, { Authorization: 'Bearer not-the-token' }, { Authorization: `Bearer ${run.token.slice(0, -1)}` }]) {
        const r = await httpRequest(api('/chats/nope'), { headers });
        expect(r.status).toBe(401);
        expect(r.json()).toEqual({ error: { code: 'unauthorized', message: 'Missing or invalid Authorization Bearer token' } });
        expect((await httpRequest(api('/events'), { headers })).status).toBe(401);
      }
      const right = await httpRequest(api('/chats/nope'), { headers: { Authorization: `Bearer ${run.token}` } });
      expect(right.status).toBe(404);
      expect(right.json().error.code).toBe('chat_not_found');
      const sseOk = await SseClient.open(api('/events'), { Authorization: `Bearer ${run.token}` });
      clients.push(sseOk);
      expect((await sseOk.waitFor((e) => e.event === 'session:connected')).data).toMatchObject({ protocolVersion: '1.0' });
      // A foreign Host (DNS rebinding) is refused even with the token.
      expect((await httpRequest(api('/chats/nope'), { headers: { Authorization: `Bearer ${run.token}`, Host: `attacker.example:${run.port}` } })).status).toBe(403);

      const logText = readFileSync(join(home, '.patchbay', 'logs', 'server.log'), 'utf8') + p.stderr;
      expect(logText).toContain(`remote API listening on ${run.url}`);
      expect(logText).not.toContain(run.token);
      expect(run.token.length).toBeGreaterThanOrEqual(22);

      await p.stop();
      await sseOk.closed();
      expect(sseOk.events.map((e) => e.event)).toEqual(['session:connected', 'session:disconnecting']);
      expect(existsSync(file)).toBe(false);
    } finally {
      for (const c of clients.splice(0)) c.close();
    }
  });
});
