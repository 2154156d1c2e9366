/**
 * Workspace folders added and removed at run time (issue 17 point 4), over the built binary.
 * What is sent follows eca-emacs, eca-util.el `eca--session-add-workspace-folder` and
 * `eca--session-remove-workspace-folder`: `workspace/didChangeWorkspaceFolders` with
 * `{event: {added: [{uri, name}], removed: []}}` (and the reverse for a removal). What follows
 * follows ECA's server, src/eca/handlers.clj `workspace-did-change-folders`: the removed URIs
 * leave the folders, the added ones are appended, and everything that reads the folders (tools,
 * contexts) sees the new set.
 */
import { spawnSync } from 'node:child_process';
import { createServer, type Socket } from 'node:net';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ECA } from '../../src/protocol/eca/methods.js';
import { cliConfig, cliEnv, EcaProc, fakeProviderConfig, runPatchbay, tempDir, useFakeLlmSuite, workspace, type Msg } from './harness.js';
import { fixture } from '../support/mcp-helpers.js';
import { initializeParams } from '../support/framed.js';

const { llm, track } = useFakeLlmSuite();

const TSLS = resolve(import.meta.dirname, '../../node_modules/.bin/typescript-language-server');

const folder = (path: string) => ({ uri: pathToFileURL(path).href, name: basename(path) });

/** Polls until `pred` holds (a generous deadline for "it happens", never a speed check). */
async function until(pred: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Changes the server logged as applied: the INFO line only, never a warning that mentions the folders. */
const done = (p: EcaProc) => (p.stderr.match(/ INFO \[workspace\] workspace folders: \//g) ?? []).length;

/** Sends what eca-emacs sends and waits until the server logged the change as complete. */
async function changeFolders(p: EcaProc, added: string[], removed: string[]): Promise<void> {
  const before = done(p);
  p.notify(ECA.workspaceDidChangeWorkspaceFolders, { event: { added: added.map(folder), removed: removed.map(folder) } });
  await until(() => done(p) > before, 'the workspace folders to change');
}

async function boot(root: string, extra: Record<string, unknown> = {}, home = tempDir('pb-home-')): Promise<EcaProc> {
  const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url, 'openai-chat', extra) }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === ECA.configUpdated.method);
  return p;
}

const filePaths = async (p: EcaProc, query: string): Promise<string[]> => ((await p.request(ECA.chatQueryFiles, { query })).result.files as Array<{ path: string }>).map((f) => f.path);
const contextPaths = async (p: EcaProc, query: string): Promise<string[]> =>
  ((await p.request(ECA.chatQueryContext, { query, contexts: [] })).result.contexts as Array<{ path?: string }>).flatMap((c) => (c.path ? [c.path] : []));

/**
 * One turn in which the model reads `path`: rejects the call if it asks. Returns whether it
 * asked, what it read, and the tool names the model was offered.
 */
async function readThrough(p: EcaProc, path: string, id: string): Promise<{ asked: boolean; output: string; tools: string[] }> {
  const from = llm().requests.length;
  llm().script([{ toolCall: { id, name: 'patchbay__read_file', args: { path } } }], [{ text: 'ok' }]);
  const chatId = (await p.request(ECA.chatPrompt, { message: `read ${id}` })).result.chatId;
  const run = await p.waitFor((m) => m.params?.content?.type === 'toolCallRun' && m.params.content.id === id, `toolCallRun ${id}`);
  const asked = run.params.content.manualApproval as boolean;
  if (asked) p.notify(ECA.chatToolCallReject, { chatId, toolCallId: id });
  await p.turnDone(chatId);
  const called = p.contents(chatId).find((c) => c.content.type === 'toolCalled' && c.content.id === id)?.content;
  const output = called ? (called.outputs as Array<{ text?: string }>).map((o) => o.text ?? '').join('\n') : '';
  const tools = (llm().requests[from].body.tools ?? []).map((t: { function: { name: string } }) => t.function.name);
  return { asked, output, tools };
}

/** A folder with a note and a `.patchbay/config.json` that denies grep and runs an MCP server writing `marker`. */
function folderWithConfig(): { root: string; note: string; marker: string } {
  const root = workspace({ 'notes-bee.md': 'bee notes\n' }, 'pb-added-');
  const marker = join(root, 'marker');
  mkdirSync(join(root, '.patchbay'));
  writeFileSync(
    join(root, '.patchbay', 'config.json'),
    JSON.stringify({
      toolCall: { approval: { deny: { grep: {} } } },
      mcpServers: { evil: { command: process.execPath, args: [fixture('mcp-wire.mjs')], env: { MCP_RECORD: marker } } },
    }),
  );
  return { root, note: join(root, 'notes-bee.md'), marker };
}

/**
 * A git repo whose own `.git/config` names a `core.fsmonitor` program (git runs it for `ls-files`),
 * which writes `marker`: a folder that would run its code when patchbay lists its files.
 */
function repoWithFsmonitor(name: string): { root: string; marker: string } {
  const root = workspace({ [`${name}-file.txt`]: 'tracked\n' }, 'pb-fsmonitor-');
  const marker = join(tempDir('pb-marker-'), 'ran');
  const hook = join(tempDir('pb-hook-'), 'fsmonitor.sh');
  writeFileSync(hook, `#!/bin/sh\ntouch ${JSON.stringify(marker)}\n`);
  chmodSync(hook, 0o755);
  for (const args of [
    ['init', '-q'],
    ['config', 'core.fsmonitor', hook],
  ]) {
    expect(spawnSync('git', args, { cwd: root }).status).toBe(0);
  }
  return { root, marker };
}

const evilRunning = (m: Msg) => m.method === ECA.toolServerUpdated.method && m.params.name === 'evil' && m.params.status === 'running';

describe('workspace/didChangeWorkspaceFolders', () => {
  it('an added folder is searched, inside the workspace and configured (untrusted: held back); removed, all of it reverts', { timeout: 60_000 }, async () => {
    const first = workspace({ 'a.txt': 'in the first folder\n' });
    const added = folderWithConfig();
    // A running MCP server of the user's config hears of each change (MCP `notifications/roots/list_changed`).
    const record = join(tempDir(), 'wire.jsonl');
    const p = await boot(first, { mcpServers: { wire: { command: process.execPath, args: [fixture('mcp-wire.mjs')], env: { MCP_RECORD: record } } } });
    await p.waitFor((m) => m.method === ECA.toolServerUpdated.method && m.params.name === 'wire' && m.params.status === 'running', 'the MCP server to run');
    const rootsChanged = () => (existsSync(record) ? readFileSync(record, 'utf8').split('notifications/roots/list_changed').length - 1 : 0);
    expect(rootsChanged()).toBe(0);

    expect(await filePaths(p, 'notes-bee')).not.toContain(added.note);
    const outside = await readThrough(p, added.note, 'r1');
    expect(outside.asked).toBe(true);
    expect(outside.tools).toContain('patchbay__grep');

    await changeFolders(p, [added.root], []);
    // Untrusted: its MCP server is held back and the editor is told, as at start.
    const held = await p.waitFor((m) => m.method === '$/showMessage' && /held back/.test(m.params.message), 'held-back message');
    expect(held.params.message).toContain('mcpServers.evil');
    expect(held.params.message).toContain(added.root);
    await until(async () => (await filePaths(p, 'notes-bee')).includes(added.note), 'the added folder to be indexed');
    expect(await contextPaths(p, 'notes-bee')).toContain(added.note);
    const inside = await readThrough(p, added.note, 'r2');
    expect(inside.asked).toBe(false);
    expect(inside.output).toContain('bee notes');
    // Its deny rule applies (deny rules apply untrusted): grep is no longer offered.
    expect(inside.tools).not.toContain('patchbay__grep');
    expect(existsSync(added.marker)).toBe(false);
    expect(p.messages.some(evilRunning)).toBe(false);
    await until(() => rootsChanged() === 1, 'the MCP server to hear of the added folder');
    // Said once (by the config reload), not again when the change completes.
    expect(p.messages.filter((m) => m.method === '$/showMessage' && /held back/.test(m.params.message))).toHaveLength(1);

    await changeFolders(p, [], [added.root]);
    await until(() => rootsChanged() === 2, 'the MCP server to hear of the removed folder');
    expect(await filePaths(p, 'notes-bee')).not.toContain(added.note);
    expect(await contextPaths(p, 'notes-bee')).not.toContain(added.note);
    const removed = await readThrough(p, added.note, 'r3');
    expect(removed.asked).toBe(true);
    expect(removed.tools).toContain('patchbay__grep');
    // The first folder was never touched.
    expect(await filePaths(p, 'a.txt')).toContain(join(first, 'a.txt'));
  });

  // Follows eca-emacs `eca--session-add-workspace-folder` (a folder given to the server at once)
  // and ECA's `workspace-did-change-folders`: listing a folder's files must run none of its code.
  it('a git folder’s own core.fsmonitor program never runs, whether the folder is given at start or added', { timeout: 60_000 }, async () => {
    const atStart = repoWithFsmonitor('start');
    const added = repoWithFsmonitor('added');
    const p = await boot(atStart.root);
    await until(async () => (await filePaths(p, 'start-file')).includes(join(atStart.root, 'start-file.txt')), 'the first folder to be listed');
    await changeFolders(p, [added.root], []);
    await until(async () => (await filePaths(p, 'added-file')).includes(join(added.root, 'added-file.txt')), 'the added folder to be listed');
    // (Without `-c core.fsmonitor=false` both markers appear: git lists these folders, not a walk.)
    expect(existsSync(atStart.marker)).toBe(false);
    expect(existsSync(added.marker)).toBe(false);
  });

  // The approval round follows eca-emacs `eca-chat--tool-call-approve` (chat/toolCallApprove for
  // the call's id); the removal follows `eca--session-remove-workspace-folder`.
  it('a folder removed while a call into it waits for approval: approving it asks again, now as outside', { timeout: 60_000 }, async () => {
    const first = workspace({ 'a.txt': 'a\n' });
    const second = workspace({ 'b.txt': 'b\n' }, 'pb-removed-');
    const target = join(second, 'new.txt');
    const p = await boot(first, { toolCall: { approval: { byDefault: 'ask' } } });
    await changeFolders(p, [second], []);
    llm().script([{ toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: target, content: 'written\n' } } }], [{ text: 'ok' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'write it' })).result.chatId;
    const isRun = (m: Msg) => m.params?.content?.type === 'toolCallRun' && m.params.content.id === 'w1';
    const first1 = await p.waitFor(isRun, 'the call to ask');
    expect(first1.params.content.manualApproval).toBe(true);

    await changeFolders(p, [], [second]);
    const from = p.messages.length;
    p.notify(ECA.chatToolCallApprove, { chatId, toolCallId: 'w1' });
    // Approved as a call inside the workspace; the folder is gone now, so it is asked about again.
    const again = await p.waitFor(isRun, 'the call to ask again', 15_000, from);
    expect(again.params.content.manualApproval).toBe(true);
    p.notify(ECA.chatToolCallReject, { chatId, toolCallId: 'w1' });
    await p.turnDone(chatId);
    expect(p.contents(chatId).some((c) => c.content.type === 'toolCallRejected' && c.content.id === 'w1')).toBe(true);
    expect(existsSync(target)).toBe(false);
  });

  // eca-emacs sends `workspace/didChangeWorkspaceFolders` whenever a folder is added
  // (`eca--session-add-workspace-folder`), which may be before ECA's `initialized`
  // (handlers.clj `initialized` starts the MCP servers): nothing starts before it, and the editor
  // hears of held-back settings once, after it.
  it('changes before initialized: no MCP server starts early or after its folder went; held-back settings said once, after initialized', { timeout: 60_000 }, async () => {
    const home = tempDir('pb-home-');
    const untrusted = folderWithConfig();
    const trusted = folderWithConfig();
    expect(
      (await runPatchbay(['trust', '--yes', trusted.root], { home, cwd: tempDir(), env: cliEnv(home, { PATCHBAY_CONFIG: cliConfig(fakeProviderConfig(llm().url)) }), timeoutMs: 30_000 })).code,
    ).toBe(0);
    const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url, 'openai-chat') }));
    await p.request(ECA.initialize, initializeParams(workspace({ 'a.txt': 'a\n' }), 'test'));
    await changeFolders(p, [untrusted.root, trusted.root], []);
    await changeFolders(p, [], [trusted.root]);
    expect(p.messages.some((m) => m.method === '$/showMessage' && /held back/.test(m.params.message))).toBe(false);

    p.notify(ECA.initialized, {});
    await p.waitFor((m) => m.method === ECA.progress.method && m.params.taskId === 'mcp-servers' && m.params.type === 'finish', 'the servers task to finish', 20_000);
    const held = p.messages.filter((m) => m.method === '$/showMessage' && /held back/.test(m.params.message));
    expect(held).toHaveLength(1);
    expect(held[0].params.message).toContain(untrusted.root);
    // The trusted folder's server was configured only while the folder was open, before `initialized`.
    expect(p.messages.some(evilRunning)).toBe(false);
    expect(existsSync(trusted.marker)).toBe(false);
    expect(existsSync(untrusted.marker)).toBe(false);
  });

  it('a trusted folder’s config applies in full when added: its MCP server starts', { timeout: 60_000 }, async () => {
    const home = tempDir('pb-home-');
    const added = folderWithConfig();
    const trusted = await runPatchbay(['trust', '--yes', added.root], {
      home,
      cwd: tempDir(),
      env: cliEnv(home, { PATCHBAY_CONFIG: cliConfig(fakeProviderConfig(llm().url)) }),
      timeoutMs: 30_000,
    });
    expect(trusted.code).toBe(0);
    const p = await boot(workspace({ 'a.txt': 'a\n' }), {}, home);

    await changeFolders(p, [added.root], []);
    await p.waitFor(evilRunning, 'the trusted folder’s MCP server to run', 20_000);
    await until(() => existsSync(added.marker), 'the MCP server to write its marker');
    expect(p.messages.some((m) => m.method === '$/showMessage' && /held back/.test(m.params.message))).toBe(false);
  });

  // eca-emacs eca-util.el `eca--session-add-workspace-folder` then closing Emacs (the process's
  // pipes close, as `eca-process--stop`): shutdown must not sit out the folder's config reload
  // and then kill everything (Workspace.dispose, EcaServer.disposeWithin's forced close).
  it('closing the editor during a slow folder reload shuts down cleanly, not by a forced kill', { timeout: 60_000 }, async () => {
    // An Ollama that accepts connections and never answers: model discovery waits out its 1.5 s timeout.
    const sockets: Socket[] = [];
    let asked = false;
    const silent = createServer((s) => {
      asked = true;
      sockets.push(s);
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const port = (silent.address() as { port: number }).port;
      const home = tempDir('pb-home-');
      const added = workspace({ 'n.md': 'n\n' }, 'pb-slow-');
      mkdirSync(join(added, '.patchbay'));
      writeFileSync(join(added, '.patchbay', 'config.json'), JSON.stringify({ providers: { slow: { api: 'ollama', url: `http://127.0.0.1:${port}` } } }));
      const trusted = await runPatchbay(['trust', '--yes', added], { home, cwd: tempDir(), env: cliEnv(home, { PATCHBAY_CONFIG: cliConfig(fakeProviderConfig(llm().url)) }), timeoutMs: 30_000 });
      expect(trusted.code).toBe(0);
      const p = await boot(workspace({ 'a.txt': 'a\n' }), {}, home);
      p.notify(ECA.workspaceDidChangeWorkspaceFolders, { event: { added: [folder(added)], removed: [] } });
      await until(() => asked, 'the added folder’s provider to be asked for its models');
      p.child.stdin.end();
      await Promise.race([p.exited, new Promise((_, reject) => setTimeout(() => reject(new Error('server still running')), 20_000))]);
      const log = readFileSync(join(home, '.patchbay', 'logs', 'server.log'), 'utf8');
      expect(log).not.toMatch(/shutdown did not finish in time/);
      expect(log).toMatch(/workspace folder change was still in progress at shutdown/);
      // The store was closed by a clean stop: SQLite removed its WAL.
      expect(existsSync(join(home, '.patchbay', 'patchbay.db-wal'))).toBe(false);
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });

  it('bad changes are warned about and change nothing; the server keeps answering', { timeout: 60_000 }, async () => {
    const first = workspace({ 'a.txt': 'a\n' });
    const stranger = workspace({ 'stranger.txt': 's\n' });
    const p = await boot(first);
    const send = (params: unknown) => p.notify(ECA.workspaceDidChangeWorkspaceFolders, params);
    send({ event: { added: [], removed: [folder(stranger)] } });
    send({ event: { added: [{ uri: 'https://example.com/repo', name: 'web' }], removed: [] } });
    send({ event: { added: [folder(join(first, 'no-such-dir'))], removed: [] } });
    send({ event: { added: [folder(first)], removed: [] } });
    send({ event: { added: [], removed: [folder(first)] } });
    send({ event: { added: 'not a list' } });
    send(null);

    const warnings = [
      `cannot remove workspace folder ${stranger}: it is not one of the workspace folders`,
      'cannot add "https://example.com/repo": not a file: URI; ignored',
      `cannot add workspace folder ${join(first, 'no-such-dir')}: no such directory`,
      `workspace folder ${first} is already open; added once only`,
      `cannot remove workspace folder ${first}: it is the last one`,
    ];
    await until(() => warnings.every((w) => p.stderr.includes(w)) && (p.stderr.match(/Invalid params for workspace\/didChangeWorkspaceFolders: event/g) ?? []).length >= 2, 'every warning', 20_000);
    // Nothing changed: no change completed, the folder is still the only one, and it still answers.
    expect(done(p)).toBe(0);
    expect(await filePaths(p, 'a.txt')).toContain(join(first, 'a.txt'));
    expect(await filePaths(p, 'stranger')).not.toContain(join(stranger, 'stranger.txt'));
    llm().script([{ text: 'still here' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'hi' })).result.chatId;
    await p.turnDone(chatId);
    expect(p.text(chatId)).toBe('still here');
  });

  it('a language server follows: an added folder’s files get theirs, a removed folder’s server stops', { timeout: 120_000 }, async () => {
    const first = workspace({ 'readme.md': '# first\n' });
    const project = workspace(
      {
        'package.json': JSON.stringify({ name: 'fixture', type: 'module', private: true }),
        'tsconfig.json': JSON.stringify({ compilerOptions: { strict: true, module: 'NodeNext', target: 'ES2022', noEmit: true }, include: ['src'] }),
        'src/a.ts': 'const n: number = 1;\nexport const m = n;\n',
      },
      'pb-lsp-added-',
    );
    const p = await boot(first, {
      languageServers: {
        typescript: { command: TSLS, args: ['--stdio'], extensions: ['ts'] },
        'typescript-language-server': { disabled: true },
      },
      toolCall: { approval: { byDefault: 'allow' } },
    });

    await changeFolders(p, [project], []);
    const file = join(project, 'src/a.ts');
    llm().script([{ toolCall: { id: 'bad', name: 'patchbay__edit_file', args: { path: file, original_content: 'const n: number = 1;', new_content: 'const n: number = "x";' } } }], [{ text: 'done' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'break it' })).result.chatId;
    await p.turnDone(chatId, 1, 90_000);
    const called = p.contents(chatId).find((c) => c.content.type === 'toolCalled' && c.content.id === 'bad')!.content;
    const output = (called.outputs as Array<{ text?: string }>).map((o) => o.text ?? '').join('\n');
    // Inside the workspace now (byDefault allow runs it), and the server started for that folder saw the error.
    expect(called.error).toBe(false);
    expect(output).toContain('The language server now reports these errors in the file:');
    expect(output).toContain("Type 'string' is not assignable to type 'number'");
    await p.waitFor((m) => m.method === ECA.toolServerUpdated.method && m.params.type === 'lsp' && m.params.name === 'typescript' && m.params.status === 'running', 'lsp running');

    const from = p.messages.length;
    await changeFolders(p, [], [project]);
    await p.waitFor((m) => m.method === ECA.toolServerUpdated.method && m.params.type === 'lsp' && m.params.name === 'typescript' && m.params.status === 'stopped', 'lsp stopped', 15_000, from);
  });
});
