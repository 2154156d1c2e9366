/**
 * What an ACP client offers, used: file tools through its buffers (`fs/read_text_file`,
 * `fs/write_text_file`, ACP file-system.mdx) and `shell_command` in its terminal (`terminal/*`,
 * ACP terminals.mdx), the terminal shown in the call as `{type:'terminal'}` content.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fakeProviderConfig, tempDir, useTempDirs, workspace } from './harness.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { AcpProc, useAcpProcs } from './acp-harness.js';

const scratch = useTempDirs();
const llm = useFakeLlm();
const track = useAcpProcs();

function start(): { p: AcpProc; root: string } {
  const home = scratch(tempDir());
  const root = scratch(workspace({ 'a.txt': 'on disk\n' }));
  return { p: track(new AcpProc({ home, config: fakeProviderConfig(llm().url) })), root };
}

describe('patchbay acp with the client’s fs and terminal', () => {
  it('reads the unsaved buffer and writes through the client; the disk is left to the editor', async () => {
    const { p, root } = start();
    const file = join(root, 'a.txt');
    const buffers = new Map([[file, 'unsaved text\n']]);
    p.onRead = (r) => ({ content: buffers.get(r.path) ?? '' });
    p.onWrite = (r) => void buffers.set(r.path, r.content);
    await p.initialize({ fs: { readTextFile: true, writeTextFile: true } });
    const sessionId = await p.newSession(root);
    llm().script(
      [{ toolCall: { id: 'r1', name: 'patchbay__read_file', args: { path: file } } }],
      [{ toolCall: { id: 'e1', name: 'patchbay__edit_file', args: { path: file, original_content: 'unsaved', new_content: 'edited' } } }],
      [{ text: 'done' }],
    );
    expect((await p.prompt(sessionId, 'edit the buffer')).stopReason).toBe('end_turn');
    // The model read the buffer, not the disk.
    expect(JSON.stringify(llm().requests[1]?.body)).toContain('unsaved text');
    expect(p.reads.every((r) => r.sessionId === sessionId && r.path === file)).toBe(true);
    expect(p.writes).toEqual([expect.objectContaining({ sessionId, path: file, content: 'edited text\n' })]);
    expect(buffers.get(file)).toBe('edited text\n');
    expect(readFileSync(file, 'utf8')).toBe('on disk\n');
    const diff = p.updates(sessionId).find((u) => u.sessionUpdate === 'tool_call' && u.toolCallId === 'e1');
    expect(diff && 'content' in diff ? diff.content : undefined).toEqual([{ type: 'diff', path: file, oldText: 'unsaved text\n', newText: 'edited text\n' }]);
  });

  it('runs shell_command in the client terminal and shows it in the call', async () => {
    const { p, root } = start();
    await p.initialize({ terminal: true });
    const sessionId = await p.newSession(root);
    llm().script([{ toolCall: { id: 's1', name: 'patchbay__shell_command', args: { command: 'echo from-the-terminal' } } }], [{ text: 'ran' }]);
    expect((await p.prompt(sessionId, 'run it')).stopReason).toBe('end_turn');
    const create = p.terminals.calls.find((c) => c.method === 'create');
    // The client's terminal runs it in the OS sandbox, as a local run would be (the client runs on this machine).
    expect(create?.params).toMatchObject({ sessionId, command: expect.stringMatching(/bwrap$/) as string, cwd: root });
    const args = (create?.params as { args: string[] }).args;
    expect(args.slice(-4)).toEqual(['--', '/bin/sh', '-c', 'echo from-the-terminal']);
    expect(args).toEqual(expect.arrayContaining(['--unshare-net', '--unshare-pid']));
    expect(p.terminals.methods()).toEqual(expect.arrayContaining(['create', 'waitForExit', 'output', 'release']));
    const shown = p.updates(sessionId).find((u) => u.sessionUpdate === 'tool_call_update' && JSON.stringify(u.content ?? []).includes('"terminal"'));
    expect(shown).toMatchObject({ toolCallId: 's1', content: [{ type: 'terminal', terminalId: expect.any(String) as string }] });
    expect(JSON.stringify(llm().requests[1]?.body)).toContain('from-the-terminal');
    const call = p.updates(sessionId).find((u) => u.sessionUpdate === 'tool_call' && u.toolCallId === 's1');
    expect(call).toMatchObject({ kind: 'execute' });
    // Done, the call keeps its terminal (ACP: its output stays visible after release).
    const done = p
      .updates(sessionId)
      .filter((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === 's1')
      .at(-1);
    expect(done).toMatchObject({ status: 'completed', content: expect.arrayContaining([{ type: 'terminal', terminalId: expect.any(String) as string }]) as unknown });
  });

  it('ask_user is a form elicitation placed at its call; the answer reaches the model', async () => {
    const { p, root } = start();
    p.onElicit = () => ({ action: 'accept', content: { answer: 'Postgres' } });
    await p.initialize({ elicitation: { form: {} } });
    const sessionId = await p.newSession(root);
    const question = { question: 'Which database?', options: [{ label: 'Postgres' }, { label: 'SQLite' }], allowFreeform: false };
    llm().script([{ toolCall: { id: 'q1', name: 'patchbay__ask_user', args: question } }], [{ text: 'ok' }]);
    expect((await p.prompt(sessionId, 'set up the db')).stopReason).toBe('end_turn');
    expect(p.elicitations[0]).toMatchObject({ mode: 'form', sessionId, toolCallId: 'q1', message: 'Which database?' });
    expect(JSON.stringify(p.elicitations[0])).toContain('"oneOf"');
    expect(JSON.stringify(llm().requests[1]?.body)).toContain('Postgres');
  });

  it('without elicitation the model is not offered ask_user', async () => {
    const { p, root } = start();
    await p.initialize();
    const sessionId = await p.newSession(root);
    llm().script([{ text: 'hi' }]);
    await p.prompt(sessionId, 'hello');
    expect(JSON.stringify(llm().requests[0]?.body)).not.toContain('ask_user');
  });
});
