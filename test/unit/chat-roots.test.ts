/**
 * A chat's folders are part of the chat (issue 30 item 2; src/core/chat/chat-roots.ts): ChatService
 * driven directly with a scripted LLM client, a real SQLite store and the real native tools. Two
 * chats with folders of their own run at once in a workspace that is neither's: each one's
 * relative writes, shell working folder, containment and tool context are its own; the folders
 * are stored, restored after the store is opened again, kept by a fork and inherited by a subagent.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { ChatService } from '../../src/core/chat/chats.js';
import { CommandRegistry } from '../../src/core/chat/commands.js';
import type { ChatDeps } from '../../src/core/deps.js';
import type { ChatEvent } from '../../src/core/events.js';
import { ToolRegistry } from '../../src/core/tool-calls/tool-registry.js';
import { nativeTools } from '../../src/core/tools/native/index.js';
import { spawnAgentTool } from '../../src/core/tools/spawn-agent.js';
import { BUILT_IN_SUBAGENTS } from '../../src/core/subagents/definitions.js';
import { namedRoots } from '../../src/core/chat/chat-roots.js';
import { Hooks } from '../../src/core/hooks/hooks.js';
import type { HookConfig } from '../../src/config/hooks.js';
import type { LlmClient, LlmEvent, LlmRequest, ModelEntry } from '../../src/shapes/llm.js';
import type { Tool } from '../../src/shapes/tool.js';
import { SqliteStore } from '../../src/store/sqlite.js';

const MODEL: ModelEntry = { id: 'fake/m', provider: 'fake', api: 'openai-chat', modelName: 'm', url: 'http://127.0.0.1:1' };

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

function tempDir(): string {
  // Real path: `pwd` prints the real folder, and the checks compare real paths.
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'patchbay-chat-roots-')));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function folder(parent: string, name: string, files: Record<string, string> = {}): string {
  const dir = join(parent, name);
  mkdirSync(dir, { recursive: true });
  for (const [rel, text] of Object.entries(files)) writeFileSync(join(dir, rel), text);
  return dir;
}

type Call = { name: string; args: Record<string, unknown> };
/** A model step: the calls it makes (then `tool_calls`), or its text answer. */
type Step = Call[] | string;

/** The script of each conversation, chosen by a word its first user message holds. */
type Scripts = Record<string, Step[]>;

/** What each chat's tool `where` saw as its ToolContext.roots, by chat id. */
function whereTool(seen: Map<string, string[][]>): Tool {
  return {
    name: 'where',
    server: 'patchbay',
    origin: 'native',
    description: 'where',
    inputSchema: { type: 'object' },
    readOnly: true,
    mutates: false,
    call: async (_args, ctx) => {
      seen.set(ctx.chatId, [...(seen.get(ctx.chatId) ?? []), [...ctx.roots]]);
      return { error: false, outputs: [{ type: 'text', text: ctx.roots.join(',') }] };
    },
  };
}

function stepEvents(step: Step, n: number): LlmEvent[] {
  if (typeof step === 'string')
    return [
      { type: 'text', text: step },
      { type: 'finish', reason: 'stop' },
    ];
  return [
    ...step.flatMap((c, i): LlmEvent[] => {
      const id = `c${n}-${i}`;
      const name = `patchbay__${c.name}`;
      return [
        { type: 'toolCallStart', id, name },
        { type: 'toolCallEnd', id, name, args: c.args },
      ];
    }),
    { type: 'finish', reason: 'tool_calls' },
  ];
}

interface Setup {
  chats: ChatService;
  store: SqliteStore;
  events: Array<{ chatId: string; e: ChatEvent }>;
  seen: Map<string, string[][]>;
  /** The folders each rendering of @-contexts was asked to resolve in. */
  rendered: Array<string[] | undefined>;
  workspace: string[];
}

/**
 * A ChatService over the store at `dbPath` in a workspace of `workspace` (mutable: a folder
 * change). `barrier`: the first step of these scripts waits until each of them has begun, so
 * their turns run at the same time. Calls that ask are rejected and counted in `asked`.
 */
function setup(dbPath: string, workspace: string[], scripts: Scripts, opts: { barrier?: string[]; asked?: Array<{ chatId: string; args: unknown }>; hooks?: Record<string, HookConfig> } = {}): Setup {
  const store = new SqliteStore(dbPath);
  cleanups.push(() => store.close());
  const registry = new ToolRegistry();
  const seen = new Map<string, string[][]>();
  const events: Setup['events'] = [];
  const rendered: Setup['rendered'] = [];
  const steps = new Map<string, number>();
  const waiting = new Set(opts.barrier ?? []);
  let release!: () => void;
  const together = new Promise<void>((r) => (release = r));
  const client: LlmClient = {
    api: 'openai-chat',
    async *stream(req: LlmRequest) {
      const first = req.messages.find((m) => m.role === 'user');
      const key = Object.keys(scripts).find((k) => first?.role === 'user' && first.content.includes(k));
      if (!key) throw new Error(`no script for ${JSON.stringify(first)}`);
      const n = steps.get(key) ?? 0;
      steps.set(key, n + 1);
      const step = scripts[key][n];
      if (step === undefined) throw new Error(`the script of ${key} has no step ${n}`);
      if (n === 0 && waiting.has(key)) {
        waiting.delete(key);
        if (!waiting.size) release();
        await together;
      }
      for (const e of stepEvents(step, n)) yield e;
    },
  };
  const config = configSchema.parse({ chat: { generateTitles: false } });
  const deps: ChatDeps = {
    store,
    events: {
      event: (chatId, e) => {
        events.push({ chatId, e });
        if (e.type === 'toolCall' && e.state === 'announced' && e.needsApproval) {
          opts.asked?.push({ chatId, args: e.arguments });
          chats.reject(chatId, e.id);
        }
      },
      opened: () => {},
      cleared: () => {},
      deleted: () => {},
      showMessage: () => {},
    },
    tools: registry,
    editor: {},
    config: () => config,
    roots: () => workspace,
    models: () => [MODEL],
    defaultModel: () => MODEL,
    clientFor: async () => client,
    stream: (c, req) => c.stream(req),
    cost: () => undefined,
    renderContexts: async (_contexts, _signal, roots) => (rendered.push(roots), { text: '', errors: [] }),
    promptSections: () => [],
    updatedContexts: () => [],
    stopGraceMs: 20,
    ...(opts.hooks ? { hooks: hooksOf(opts.hooks, () => workspace) } : {}),
  };
  const chats = new ChatService(deps, new CommandRegistry());
  registry.set('native', [...nativeTools(), whereTool(seen), spawnAgentTool({ defs: () => [...BUILT_IN_SUBAGENTS], chats, maxParallel: () => 2 })]);
  cleanups.push(() => void chats.dispose(0));
  return { chats, store, events, seen, rendered, workspace };
}

function hooksOf(hooks: Record<string, HookConfig>, roots: () => string[]): Hooks {
  return new Hooks({ hooks: () => hooks, roots, dbPath: '/db', executable: '/bin/patchbay', env: process.env, problems: () => {} });
}

/** The text the model read back from a chat's tool calls of its first step, in the order they were made. */
function toolTexts(store: SqliteStore, chatId: string): string[] {
  const byId = new Map(store.messages(chatId).flatMap((m) => (m.role === 'tool' ? [[m.toolCallId, m.llmText] as const] : [])));
  return [0, 1, 2, 3, 4].map((i) => byId.get(`c0-${i}`) ?? '');
}

describe("a chat's own folders", () => {
  it('two chats in two folders at once: relative writes, shell cwd, containment and the tool context are each its own', async () => {
    const top = tempDir();
    const ws = folder(top, 'workspace');
    const a = folder(top, 'projA', { 'secret.txt': 'secret of A' });
    const b = folder(top, 'projB', { 'secret.txt': 'secret of B' });
    const turn = (mine: string, other: string, tag: string): Step[] => [
      [
        { name: 'write_file', args: { path: 'which.txt', content: tag } },
        { name: 'shell_command', args: { command: 'pwd' } },
        { name: 'read_file', args: { path: 'secret.txt' } },
        { name: 'read_file', args: { path: join(other, 'secret.txt') } },
        { name: 'where', args: {} },
      ],
      'done',
    ];
    const asked: Array<{ chatId: string; args: unknown }> = [];
    const { chats, store, seen } = setup(join(top, 'chats.db'), [ws], { taskA: turn(a, b, 'A'), taskB: turn(b, a, 'B') }, { barrier: ['taskA', 'taskB'], asked });
    // Trust mode: what would ask runs unasked, so only the outside-the-folders check asks.
    const ha = chats.prompt({ message: 'taskA', cwd: a, trust: true });
    const hb = chats.prompt({ message: 'taskB', cwd: b, trust: true });
    expect(await Promise.all([ha.done, hb.done])).toEqual([{ stopReason: 'end_turn' }, { stopReason: 'end_turn' }]);

    expect(readFileSync(join(a, 'which.txt'), 'utf8')).toBe('A');
    expect(readFileSync(join(b, 'which.txt'), 'utf8')).toBe('B');
    expect(existsSync(join(ws, 'which.txt'))).toBe(false);
    const [, pwdA, ownA, otherA] = toolTexts(store, ha.chatId);
    const [, pwdB, ownB, otherB] = toolTexts(store, hb.chatId);
    expect(pwdA).toContain(a);
    expect(pwdA).not.toContain(b);
    expect(pwdB).toContain(b);
    expect(ownA).toContain('secret of A');
    expect(ownB).toContain('secret of B');
    // The other chat's file is outside this chat's folders: asked (and rejected), not read.
    expect(otherA).not.toContain('secret of B');
    expect(otherB).not.toContain('secret of A');
    expect(asked).toEqual(
      expect.arrayContaining([
        { chatId: ha.chatId, args: { path: join(b, 'secret.txt') } },
        { chatId: hb.chatId, args: { path: join(a, 'secret.txt') } },
      ]),
    );
    expect(asked).toHaveLength(2);
    expect(seen.get(ha.chatId)).toEqual([[a]]);
    expect(seen.get(hb.chatId)).toEqual([[b]]);
    expect(store.chatRoots(ha.chatId)).toEqual({ roots: [a], own: true });
    expect(store.getChat(hb.chatId)?.folder).toBe(b);
  });

  it("hooks run in the chat's folder and are told its folders", async () => {
    const top = tempDir();
    const ws = folder(top, 'workspace');
    const a = folder(top, 'projA');
    const log = join(top, 'hooks.log');
    // One line per hook run: its working folder, then the cwd and workspaces of its input.
    const script = `printf '%s ' "$(pwd)" >> '${log}'; node -e 'let s="";process.stdin.on("data",(d)=>s+=d).on("end",()=>{const j=JSON.parse(s);console.log(j.cwd+" "+j.workspaces.join(","))})' >> '${log}'`;
    const hooks: Record<string, HookConfig> = {
      request: { type: 'preRequest', actions: [{ type: 'shell', shell: script }] },
      tool: { type: 'preToolCall', actions: [{ type: 'shell', shell: script }] },
    };
    const { chats } = setup(join(top, 'chats.db'), [ws], { taskA: [[{ name: 'where', args: {} }], 'done'] }, { hooks });
    expect(await chats.prompt({ message: 'taskA', cwd: a }).done).toEqual({ stopReason: 'end_turn' });
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) expect(line).toBe(`${a} ${a} ${a}`);
  });

  it('the folders are stored and restored after the store is opened again; a fork keeps them', async () => {
    const top = tempDir();
    const ws = folder(top, 'workspace');
    const a = folder(top, 'projA');
    const extra = folder(top, 'shared');
    const db = join(top, 'chats.db');
    const first = setup(db, [ws], { taskA: [[{ name: 'where', args: {} }], 'one'] });
    const h = first.chats.prompt({ message: 'taskA', cwd: a, roots: [extra] });
    await h.done;
    expect(first.seen.get(h.chatId)).toEqual([[a, extra]]);
    expect(first.store.getChat(h.chatId)).toMatchObject({ folder: a, additionalFolders: [extra] });
    await first.chats.dispose(0);
    first.store.close();

    // Another process, in another workspace: the chat keeps its own folders, its fork too.
    const other = folder(top, 'elsewhere');
    const second = setup(db, [other], { taskA: [[{ name: 'write_file', args: { path: 'again.txt', content: 'x' } }], 'two'] });
    expect(second.chats.rootsOf(h.chatId)).toEqual([a, extra]);
    expect(await second.chats.prompt({ chatId: h.chatId, message: 'more', trust: true }).done).toEqual({ stopReason: 'end_turn' });
    expect(readFileSync(join(a, 'again.txt'), 'utf8')).toBe('x');
    expect(existsSync(join(other, 'again.txt'))).toBe(false);
    const fork = second.chats.fork(h.chatId);
    if (!fork.ok) throw new Error(fork.message);
    expect(second.store.chatRoots(fork.chatId)).toEqual({ roots: [a, extra], own: true });
    expect(second.chats.rootsOf(fork.chatId)).toEqual([a, extra]);
  });

  it('a prompt naming other folders moves the chat there from that turn on', async () => {
    const top = tempDir();
    const a = folder(top, 'projA');
    const b = folder(top, 'projB');
    const { chats, store, seen, rendered } = setup(join(top, 'chats.db'), [folder(top, 'ws')], { taskA: [[{ name: 'where', args: {} }], 'one', [{ name: 'where', args: {} }], 'two'] });
    const contexts = [{ type: 'file' as const, path: 'notes.md' }];
    const h = chats.prompt({ message: 'taskA', cwd: a, contexts });
    await h.done;
    await chats.prompt({ chatId: h.chatId, message: 'again', cwd: b, contexts }).done;
    expect(seen.get(h.chatId)).toEqual([[a], [b]]);
    // The @-contexts resolve in the chat's folders too.
    expect(rendered).toEqual([[a], [b]]);
    expect(store.chatRoots(h.chatId)).toEqual({ roots: [b], own: true });
  });

  it("a subagent works in its parent's folders", async () => {
    const top = tempDir();
    const ws = folder(top, 'workspace');
    const a = folder(top, 'projA');
    const { chats, store, seen } = setup(join(top, 'chats.db'), [ws], {
      parentTask: [[{ name: 'spawn_agent', args: { agent: 'general', task: 'childTask: write sub.txt' } }], 'parent done'],
      childTask: [
        [
          { name: 'write_file', args: { path: 'sub.txt', content: 'child' } },
          { name: 'where', args: {} },
        ],
        'child done',
      ],
    });
    const h = chats.prompt({ message: 'parentTask', cwd: a, trust: true });
    expect(await h.done).toEqual({ stopReason: 'end_turn' });
    expect(readFileSync(join(a, 'sub.txt'), 'utf8')).toBe('child');
    expect(existsSync(join(ws, 'sub.txt'))).toBe(false);
    const child = [...seen.keys()].find((id) => id !== h.chatId);
    expect(child).toBeDefined();
    expect(seen.get(child!)).toEqual([[a]]);
    expect(store.getChat(child!)?.parentChatId).toBe(h.chatId);
    expect(store.chatRoots(child!)).toEqual({ roots: [a], own: true });
  });

  it('a chat without folders of its own uses the workspace’s as they are at each turn, and the store records them', async () => {
    const top = tempDir();
    const w1 = folder(top, 'w1');
    const w2 = folder(top, 'w2');
    const workspace = [w1];
    const { chats, store, seen } = setup(join(top, 'chats.db'), workspace, { taskE: [[{ name: 'where', args: {} }], 'one', [{ name: 'where', args: {} }], 'two'] });
    const h = chats.prompt({ message: 'taskE' });
    await h.done;
    expect(store.chatRoots(h.chatId)).toEqual({ roots: [w1], own: false });
    // A folder change (ECA didChangeWorkspaceFolders): the chat follows it.
    workspace.splice(0, 1, w2);
    expect(chats.rootsOf(h.chatId)).toEqual([w2]);
    await chats.prompt({ chatId: h.chatId, message: 'again' }).done;
    expect(seen.get(h.chatId)).toEqual([[w1], [w2]]);
    expect(store.chatRoots(h.chatId)).toEqual({ roots: [w2], own: false });
  });

  it('a database from before chat folders were stored opens, and its chats use the workspace’s', async () => {
    const top = tempDir();
    const db = join(top, 'old.db');
    // The chats table as an older patchbay wrote it, with no chat_roots table.
    const old = new Database(db);
    old.exec(
      'CREATE TABLE chats (id TEXT PRIMARY KEY, title TEXT, model TEXT, agent TEXT, status TEXT NOT NULL DEFAULT \'idle\', owner_pid INTEGER, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, usage TEXT NOT NULL DEFAULT \'{"inputTokens":0,"outputTokens":0,"cost":0}\')',
    );
    old.prepare('INSERT INTO chats (id, created_at, updated_at) VALUES (?, 1, 1)').run('old-chat');
    old.close();
    const ws = folder(top, 'ws');
    const { chats, store } = setup(db, [ws], {});
    expect(store.chatRoots('old-chat')).toBeUndefined();
    expect(chats.rootsOf('old-chat')).toEqual([ws]);
    expect(chats.useRoots('old-chat', { cwd: ws })).toBe(true);
    expect(store.chatRoots('old-chat')).toEqual({ roots: [ws], own: true });
    expect(chats.useRoots('no-such-chat', { cwd: ws })).toBe(false);
  });

  it('named folders: cwd first, absolute and normal, duplicates and blanks dropped, relative ones in the workspace', () => {
    expect(namedRoots({}, ['/w'])).toBeUndefined();
    expect(namedRoots({ cwd: '  ', roots: [] }, ['/w'])).toBeUndefined();
    expect(namedRoots({ cwd: '/a/b/', roots: ['/c', '/a/b', '/a/./b'] }, ['/w'])).toEqual(['/a/b', '/c']);
    expect(namedRoots({ roots: ['/c', '/d'] }, ['/w'])).toEqual(['/c', '/d']);
    expect(namedRoots({ cwd: 'sub' }, ['/w'])).toEqual(['/w/sub']);
    expect(namedRoots({ cwd: 'sub' }, [])).toBeUndefined();
  });
});
