/**
 * `patchbay acp`'s workspace folders and what the client may send (issue 28, points 10, 11, 15,
 * 16), through the real binary over stdio: a session's folders (`cwd`, ACP
 * `additionalDirectories`) are inside its workspace, and no other session's are (issue 30);
 * `session/list` changes no folder; `/` and the home folder are refused; a line over the cap is answered and dropped with
 * the connection alive; the editor's `fs/write_text_file` is sent a path no symlink swap redirects.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { methods } from '@agentclientprotocol/sdk';
import { fakeProviderConfig, tempDir, useTempDirs, workspace } from './harness.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { AcpProc, useAcpProcs } from './acp-harness.js';

const scratch = useTempDirs();
const llm = useFakeLlm();
const track = useAcpProcs();

function start(extra: Record<string, unknown> = {}): { p: AcpProc; root: string; home: string } {
  const home = scratch(tempDir());
  const root = scratch(workspace({ 'a.txt': 'in the first folder\n' }));
  const p = track(new AcpProc({ home, config: { ...fakeProviderConfig(llm().url), ...extra } }));
  return { p, root, home };
}

const inside = (root: string, path: string) => path === root || path.startsWith(`${root}${sep}`);

/** The model reads `path` in `sessionId`; the permission asked (if any) is rejected. Returns whether it asked. */
async function readAsks(p: AcpProc, sessionId: string, path: string): Promise<boolean> {
  const before = p.permissionRequests.length;
  p.onPermission = () => ({ outcome: { outcome: 'selected', optionId: 'reject' } });
  llm().script([{ toolCall: { id: `r-${before}-${basename(path)}`, name: 'patchbay__read_file', args: { path } } }], [{ text: 'done' }]);
  expect((await p.prompt(sessionId, `read ${path}`)).stopReason).toBe('end_turn');
  return p.permissionRequests.length > before;
}

describe('patchbay acp: workspace folders', () => {
  it('session/list with another folder as cwd leaves that folder outside: a later read of it asks', async () => {
    const { p, root } = start();
    const other = scratch(workspace({ 'b.txt': 'secret of the other folder\n' }));
    await p.initialize();
    const a = await p.newSession(root);
    await p.agent.request(methods.agent.session.list, { cwd: other });
    expect(await readAsks(p, a, join(other, 'b.txt'))).toBe(true);
    expect(JSON.stringify(llm().requests.at(-1)?.body)).not.toContain('secret of the other folder');
    // Its own folder is still inside: read without asking.
    expect(await readAsks(p, a, join(root, 'a.txt'))).toBe(false);
  });

  it("each session's workspace has its own folders: another open session's folder stays outside it, and closing one leaves the others as they were", async () => {
    const { p, root } = start();
    const other = scratch(workspace({ 'b.txt': 'in the other folder\n' }));
    await p.initialize();
    const a = await p.newSession(root);
    const b = await p.newSession(other);
    // Issue 30: a session's folders select its own workspace; the other session's folder is not inside a's.
    expect(await readAsks(p, a, join(other, 'b.txt'))).toBe(true);
    expect(await readAsks(p, b, join(other, 'b.txt'))).toBe(false);
    await p.agent.request(methods.agent.session.close, { sessionId: b });
    expect(await readAsks(p, a, join(other, 'b.txt'))).toBe(true);
    expect(await readAsks(p, a, join(root, 'a.txt'))).toBe(false);
    // Two sessions in one folder: closing one keeps it for the other.
    const c = await p.newSession(root);
    await p.agent.request(methods.agent.session.close, { sessionId: c });
    expect(await readAsks(p, a, join(root, 'a.txt'))).toBe(false);
  });

  it('additionalDirectories are inside without asking (read and write), advertised, and reported by session/list', async () => {
    // Everything inside the workspace is allowed by config: only a path outside asks.
    const { p, root } = start({ toolCall: { approval: { byDefault: 'allow' } } });
    const extra = scratch(workspace({ 'c.txt': 'in the additional folder\n' }));
    const init = await p.initialize();
    expect(init.agentCapabilities?.sessionCapabilities?.additionalDirectories).toEqual({});
    const { sessionId } = await p.agent.request(methods.agent.session.new, { cwd: root, additionalDirectories: [extra], mcpServers: [] });
    llm().script(
      [{ toolCall: { id: 'r1', name: 'patchbay__read_file', args: { path: join(extra, 'c.txt') } } }],
      [{ toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: join(extra, 'new.txt'), content: 'written\n' } } }],
      [{ text: 'done' }],
    );
    expect((await p.prompt(sessionId, 'read and write the other folder')).stopReason).toBe('end_turn');
    expect(p.permissionRequests).toEqual([]);
    expect(readFileSync(join(extra, 'new.txt'), 'utf8')).toBe('written\n');
    expect(JSON.stringify(llm().requests[1]?.body)).toContain('in the additional folder');
    const listed = await p.agent.request(methods.agent.session.list, { cwd: root });
    expect(listed.sessions).toEqual([expect.objectContaining({ sessionId, cwd: root, additionalDirectories: [extra] })]);
  });

  it('a cwd or additional directory of / or of the home folder is refused, naming it; the agent goes on', async () => {
    const { p, root, home } = start();
    await p.initialize();
    await expect(p.newSession('/')).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/cwd \/ is the root of the file system/) });
    await expect(p.newSession(home)).rejects.toMatchObject({ code: -32602, message: expect.stringContaining(`cwd ${home} is your home folder`) });
    await expect(p.agent.request(methods.agent.session.new, { cwd: root, additionalDirectories: ['/'], mcpServers: [] })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('additionalDirectories[0] / is the root'),
    });
    await expect(p.agent.request(methods.agent.session.new, { cwd: root, additionalDirectories: [`${home}/`], mcpServers: [] })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('is your home folder'),
    });
    await expect(p.agent.request(methods.agent.session.load, { sessionId: 'x', cwd: '/', mcpServers: [] })).rejects.toMatchObject({ code: -32602 });
    const s = await p.newSession(root);
    llm().script([{ text: 'still here' }]);
    expect((await p.prompt(s, 'hi')).stopReason).toBe('end_turn');
  });

  it('older chats without a recorded folder are not labelled with the folder asked about; a load records it', async () => {
    const { p, root, home } = start();
    await p.initialize();
    const s = await p.newSession(root);
    llm().script([{ text: 'a' }]);
    await p.prompt(s, 'hi');
    await p.stop();
    // As a store from before folders were recorded has it.
    const db = new Database(join(home, '.patchbay', 'patchbay.db'));
    db.prepare('UPDATE chats SET folder = NULL').run();
    db.close();
    const q = track(new AcpProc({ home, config: fakeProviderConfig(llm().url) }));
    await q.initialize();
    expect((await q.agent.request(methods.agent.session.list, { cwd: root })).sessions).toEqual([]);
    const all = (await q.agent.request(methods.agent.session.list, {})).sessions;
    expect(all.map((x) => [x.sessionId, x._meta])).toEqual([[s, { patchbay: { folderRecorded: false } }]]);
    await q.agent.request(methods.agent.session.load, { sessionId: s, cwd: root, mcpServers: [] });
    expect((await q.agent.request(methods.agent.session.list, { cwd: root })).sessions.map((x) => [x.sessionId, x.cwd])).toEqual([[s, root]]);
  });
});

describe('patchbay acp: what the client sends', () => {
  it('a line over 32 MB is answered with an error for its id and dropped; the connection and its session live on', async () => {
    const { p, root } = start();
    await p.initialize();
    const s = await p.newSession(root);
    let answer: string | undefined;
    let tail = '';
    p.child.stdout.on('data', (d: Buffer) => {
      if (answer) return;
      tail = (tail + d.toString()).slice(-4096);
      const line = tail.split('\n').find((l) => l.includes('"big-line"'));
      if (line) answer = line;
    });
    const big = `{"jsonrpc":"2.0","id":"big-line","method":"session/prompt","params":{"sessionId":"${s}","prompt":[{"type":"text","text":"${'x'.repeat(33 * 1024 * 1024)}"}]}}\n`;
    await new Promise<void>((resolve, reject) => p.child.stdin.write(big, (e) => (e ? reject(e) : resolve())));
    await p.until(() => answer !== undefined, 'the answer to the over-long line', 30_000);
    expect(JSON.parse(answer!)).toMatchObject({ jsonrpc: '2.0', id: 'big-line', error: { code: -32600, message: expect.stringContaining('over the limit') } });
    llm().script([{ text: 'alive' }]);
    expect((await p.prompt(s, 'still there?')).stopReason).toBe('end_turn');
    expect(p.text(s)).toBe('alive');
    expect(p.exitCode).toBeUndefined();
  });

  it('fs/write_text_file under a racing symlink swap: every path the editor is asked to write leads inside', async () => {
    const { p, root } = start({ toolCall: { approval: { byDefault: 'allow' } } });
    const out = scratch(tempDir('pb-outside-'));
    mkdirSync(join(root, 'd'));
    symlinkSync(join(root, 'd'), join(root, 'alias'));
    const realRoot = realpathSync(root);
    // What the editor sees when the request reaches it: where the path's folder leads then.
    const asked: Array<{ path: string; folder: string }> = [];
    p.onWrite = (r) => {
      const folder = realpathSync(dirname(r.path));
      asked.push({ path: r.path, folder });
      // This editor itself writes only inside; the other sides' answers are what is tested.
      if (inside(realRoot, folder)) writeFileSync(join(folder, basename(r.path)), r.content);
    };
    p.onRead = (r) => ({ content: readFileSync(r.path, 'utf8') });
    // A call judged outside (alias led out when it was decided) asks; the user says no.
    p.onPermission = () => ({ outcome: { outcome: 'selected', optionId: 'reject' } });
    await p.initialize({ fs: { readTextFile: true, writeTextFile: true } });
    const s = await p.newSession(root);
    const N = 24;
    const round = (r: number) =>
      llm().script(
        ...Array.from({ length: N }, (_, i) => [{ toolCall: { id: `w${r}-${i}`, name: 'patchbay__write_file', args: { path: join(root, 'alias', `f${r}-${i}.txt`), content: `${i}\n` } } }]),
        [{ text: 'done' }],
      );
    // The attacker: `alias` flips between the folder inside and one outside, as fast as it can.
    const flipper = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('fs'); const [link, a, b] = process.argv.slice(1); for (let i = 0; ; i++) { const t = link + '.t'; try { fs.unlinkSync(t) } catch {} fs.symlinkSync(i % 2 ? b : a, t); fs.renameSync(t, link); }`,
        join(root, 'alias'),
        join(root, 'd'),
        out,
      ],
      { stdio: 'ignore' },
    );
    try {
      // Which writes pass the check depends on the race; another round of N until one has (at most 5),
      // so the assertion below is about the product, not about one unlucky schedule under load.
      for (let r = 0; r < 5 && asked.length === 0; r++) {
        round(r);
        expect((await p.prompt(s, 'write them')).stopReason).toBe('end_turn');
      }
    } finally {
      flipper.kill('SIGKILL');
    }
    // Some got through the check (alias led inside then) and were sent; none led outside when the editor got it.
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.filter((w) => !inside(realRoot, w.folder))).toEqual([]);
    expect(readdirSync(out)).toEqual([]);
    expect(existsSync(join(root, 'd'))).toBe(true);
  });
});
