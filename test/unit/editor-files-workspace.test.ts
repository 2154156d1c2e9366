// The file tools through a front end's editor buffers, end to end below the façade: a real
// Workspace (config, SQLite store, ChatService, tool-call state machine, approvals, rollback)
// whose FrontEnd offers `files` as the ACP façade does from the client's `fs` capabilities, and a
// fake LLM server speaking the OpenAI wire format making the calls. The editor follows ACP v1
// "File System" (agentclientprotocol.com/protocol/file-system): `fs/read_text_file` answers the
// buffer's text, unsaved changes included; `fs/write_text_file` writes the file (its buffer
// follows) — this one saves to disk as Zed does.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Workspace } from '../../src/runtime/workspace.js';
import type { ChatEvent, ChatEvents } from '../../src/core/events.js';
import type { EditorFileRead, EditorFileWrite } from '../../src/shapes/tool.js';
import { FakeLlm } from '../fixtures/fake-llm.js';

let llm: FakeLlm;
let dirs: string[];
const dir = (prefix: string) => {
  const d = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  dirs.push(d);
  return d;
};
beforeEach(async () => {
  llm = await FakeLlm.start();
  dirs = [];
});
afterEach(async () => {
  await llm.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** An editor with open buffers over the disk; a write saves (buffer and disk). */
function editor() {
  const buffers = new Map<string, string>();
  const reads: EditorFileRead[] = [];
  const writes: EditorFileWrite[] = [];
  return {
    buffers,
    reads,
    writes,
    files: {
      readTextFile: async (req: EditorFileRead) => {
        reads.push(req);
        return buffers.get(req.path) ?? readFileSync(req.path, 'utf8');
      },
      writeTextFile: async (req: EditorFileWrite) => {
        writes.push(req);
        buffers.set(req.path, req.content);
        writeFileSync(req.path, req.content);
      },
    },
  };
}

/** A workspace on `root` whose front end approves every call it is asked about, recording the asks. */
async function open(root: string, files: ReturnType<typeof editor>['files']) {
  const home = dir('pb-edws-home-');
  const events: Array<{ chatId: string; e: ChatEvent }> = [];
  const asked: string[] = [];
  let ws: Workspace | undefined;
  const sink: ChatEvents = {
    event(chatId, e) {
      events.push({ chatId, e });
      if (e.type === 'toolCall' && e.state === 'announced' && e.needsApproval) {
        asked.push(e.id);
        queueMicrotask(() => ws!.chats.approve(chatId, e.id));
      }
    },
    opened() {},
    cleared() {},
    deleted() {},
    showMessage() {},
  };
  ws = await Workspace.create({
    roots: [root],
    env: { HOME: home, PATCHBAY_HOME: join(home, '.patchbay'), XDG_CONFIG_HOME: join(home, '.config'), PATCHBAY_LOCAL_MODEL: 'off', PATH: process.env.PATH },
    initializationOptions: {
      providers: { fake: { api: 'openai-chat', url: `${llm.url}/v1`, key: 'test-key', models: { m1: { limit: { context: 100_000, output: 100 } } } } },
      defaultModel: 'fake/m1',
      chat: { generateTitles: false, maxRetries: 0 },
    },
    frontEnd: { canAsk: true, canShowDiffs: true, files },
    events: sink,
    logLevel: 'error',
  });
  await ws.modelsReady;
  return { ws, events, asked };
}

const toolEvents = (events: Array<{ e: ChatEvent }>, id: string, state: string) => events.map((x) => x.e).filter((e) => e.type === 'toolCall' && e.id === id && e.state === state);

describe('file tools through the front end’s editor buffers (Workspace, ChatService, approvals, rollback)', () => {
  it('edit_file: previewed and applied on the unsaved buffer, asked with the call’s ids; rollback restores the buffer’s text on disk', { timeout: 30_000 }, async () => {
    const root = dir('pb-edws-root-');
    const file = join(root, 'a.ts');
    writeFileSync(file, 'const a = 1;\n');
    const ed = editor();
    ed.buffers.set(file, 'const a = 1;\nconst b = 2; // unsaved\n');
    const { ws, events, asked } = await open(root, ed.files);
    try {
      llm.script([{ toolCall: { id: 'e1', name: 'patchbay__edit_file', args: { path: file, original_content: 'const b = 2;', new_content: 'const b = 3;' } } }], [{ text: 'edited' }]);
      const turn = ws.chats.prompt({ chatId: 'c1', message: 'edit it', contentId: 'u1' });
      expect(await turn.done).toMatchObject({ stopReason: 'end_turn' });

      // Asked (a write), with the diff of the buffer shown before approval.
      expect(asked).toEqual(['e1']);
      const [announced] = toolEvents(events, 'e1', 'announced');
      expect(announced).toMatchObject({ details: { type: 'fileChange', path: file, linesAdded: 1, linesRemoved: 1 } });
      expect(announced?.type === 'toolCall' && announced.details?.type === 'fileChange' && announced.details.diff).toContain('-const b = 2; // unsaved\n+const b = 3; // unsaved');
      const [done] = toolEvents(events, 'e1', 'done');
      expect(done).toMatchObject({ error: false, details: { type: 'fileChange', path: file } });

      // The preview's read and the call's read and write, each naming the chat and the call.
      expect(ed.reads.map((r) => [r.path, r.chatId, r.toolCallId])).toEqual([
        [file, 'c1', 'e1'],
        [file, 'c1', 'e1'],
      ]);
      expect(ed.writes.map((w) => [w.path, w.chatId, w.toolCallId, w.content])).toEqual([[file, 'c1', 'e1', 'const a = 1;\nconst b = 3; // unsaved\n']]);
      // The model read the edit's result.
      const sent = JSON.stringify(llm.requests.at(-1)!.body.messages);
      expect(sent).toContain(`Edited ${file}: replaced 1 occurrence`);

      // Rollback writes disk (the editor reloads it): back to the text the edit was made on.
      const rb = ws.chats.rollback('c1', 'u1', { messages: false, tools: true });
      expect(rb).toMatchObject({ ok: true });
      expect(readFileSync(file, 'utf8')).toBe('const a = 1;\nconst b = 2; // unsaved\n');
    } finally {
      await ws.dispose();
    }
  });

  it('write_file of a protected path still asks; approved, it goes through the editor; read_file reads the buffer', { timeout: 30_000 }, async () => {
    const root = dir('pb-edws-root-');
    writeFileSync(join(root, 'notes.md'), 'disk notes\n');
    mkdirSync(join(root, '.vscode'));
    const ed = editor();
    ed.buffers.set(join(root, 'notes.md'), 'buffer notes\n');
    const { ws, events, asked } = await open(root, ed.files);
    try {
      llm.script(
        [{ toolCall: { id: 'r1', name: 'patchbay__read_file', args: { path: 'notes.md' } } }],
        [{ toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: '.vscode/tasks.json', content: '{}\n' } } }],
        [{ text: 'done' }],
      );
      const turn = ws.chats.prompt({ chatId: 'c2', message: 'go' });
      expect(await turn.done).toMatchObject({ stopReason: 'end_turn' });
      // read_file is read-only (no ask) and answers from the buffer.
      expect(toolEvents(events, 'r1', 'done')).toEqual([expect.objectContaining({ error: false, outputs: [{ type: 'text', text: 'buffer notes\n' }] })]);
      // The protected path was asked about, and once approved written by the editor.
      expect(asked).toEqual(['w1']);
      expect(toolEvents(events, 'w1', 'done')).toEqual([expect.objectContaining({ error: false })]);
      expect(ed.writes.map((w) => [w.path, w.toolCallId])).toEqual([[join(root, '.vscode', 'tasks.json'), 'w1']]);
    } finally {
      await ws.dispose();
    }
  });
});
