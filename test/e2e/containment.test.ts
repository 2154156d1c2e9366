/**
 * Workspace containment against races and symlinks (issue 14, points 3 and 4), over the built
 * binary: a directory flipped between a real folder and a symlink to outside while write_file
 * runs, and the OpenCtx host's files provider asked for a file behind a symlink to outside.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, useTempDirs, workspace } from './harness.js';

const scratch = useTempDirs();
const { llm, track } = useFakeLlmSuite();

/**
 * Flips `<ws>/dir` between the real folder and a symlink to outside as fast as it can, with
 * atomic renames (the real folder waits as dir.real, the symlink as dir.link). Between two
 * renames `dir` is briefly missing; a folder patchbay makes there is moved aside as `aside<n>`
 * (still inside) so the flipping goes on. Stops by itself after a minute should the test fail
 * to kill it.
 */
const FLIPPER = `
const fs = require('node:fs');
const [ws] = process.argv.slice(1);
const dir = ws + '/dir', real = ws + '/dir.real', link = ws + '/dir.link';
let n = 0;
const put = (a, b) => {
  for (let i = 0; i < 3; i++) {
    try { fs.renameSync(a, b); return; } catch (e) { if (e.code === 'ENOENT') return; }
    try { fs.renameSync(b, ws + '/aside' + n++); } catch {}
  }
};
const end = Date.now() + 60000;
process.stdout.write('flipping\\n');
while (Date.now() < end) { put(dir, real); put(link, dir); put(dir, link); put(real, dir); }
`;

let flipper: ChildProcess | undefined;
afterEach(async () => {
  await stopFlipper();
});

async function stopFlipper(): Promise<void> {
  const f = flipper;
  flipper = undefined;
  if (!f || f.exitCode !== null || f.signalCode !== null) return;
  const exited = new Promise((r) => f.once('exit', r));
  f.kill('SIGKILL');
  await exited;
}

async function startFlipper(ws: string): Promise<void> {
  const f = spawn(process.execPath, ['-e', FLIPPER, ws], { stdio: ['ignore', 'pipe', 'inherit'] });
  flipper = f;
  await new Promise<void>((resolve, reject) => {
    f.once('error', reject);
    f.stdout!.once('data', () => resolve());
  });
}

async function boot(root: string, extra: Record<string, unknown> = {}) {
  const home = scratch(tempDir('pb-home-'));
  const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url, 'openai-chat', extra) }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === 'config/updated');
  return { p, home };
}

function content(p: EcaProc, chatId: string, type: string) {
  return p
    .contents(chatId)
    .filter((c) => c.content.type === type)
    .map((c) => c.content);
}

const CALLS = 100;

/**
 * Runs `CALLS` calls of `tool` (args for call i from `args`) in one turn while the flipper runs;
 * a call that asks (its path looked outside when judged) is rejected, as a careful user would.
 * Returns each call's outcome once the flipper is stopped.
 */
async function underFlipper(root: string, tool: string, args: (i: number) => Record<string, unknown>, approval: Record<string, unknown> = {}) {
  const { p } = await boot(root, { toolCall: { approval } });
  llm().script(
    Array.from({ length: CALLS }, (_, i) => ({ toolCall: { id: `c${i}`, name: `patchbay__${tool}`, args: args(i) } })),
    [{ text: 'done' }],
  );
  await startFlipper(root);
  const chatId = (await p.request('chat/prompt', { message: 'go' })).result.chatId;
  const answered = new Set<string>();
  const done = p.turnDone(chatId, 1, 90_000);
  let finished = false;
  void done.then(
    () => (finished = true),
    () => (finished = true),
  );
  while (!finished) {
    for (const c of content(p, chatId, 'toolCallRun')) {
      if (c.manualApproval && !answered.has(c.id)) {
        answered.add(c.id);
        p.notify('chat/toolCallReject', { chatId, toolCallId: c.id });
      }
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  await done;
  await stopFlipper();
  const called = new Map(content(p, chatId, 'toolCalled').map((c) => [c.id as string, c]));
  const rejected = new Set(content(p, chatId, 'toolCallRejected').map((c) => c.id as string));
  return Array.from({ length: CALLS }, (_, i) => {
    const c = called.get(`c${i}`);
    if (!c) {
      expect(rejected.has(`c${i}`), `c${i} neither ran nor was rejected`).toBe(true);
      return { i, kind: 'asked' as const, text: '' };
    }
    return { i, kind: c.error ? ('error' as const) : ('ok' as const), text: c.outputs.map((o: any) => o.text).join('') as string };
  });
}

/** Real folders of the workspace: dir or dir.real (where the flipper stopped), and aside<n>. */
function realDirs(root: string): string[] {
  return readdirSync(root)
    .map((d) => join(root, d))
    .filter((d) => lstatSync(d).isDirectory());
}

function tally(what: string, outcomes: Array<{ kind: string }>): void {
  const n = (k: string) => outcomes.filter((o) => o.kind === k).length;
  console.log(`${what} under a flipping directory: ${n('ok')} ran, ${n('error')} refused, ${n('asked')} asked`);
}

const REFUSED = /resolves outside the workspace \(a symlink changed while the call ran\); nothing was/;

// No window only where /proc/self/fd lets the tools look files up in a held directory (Linux);
// elsewhere the README documents a residual window (an empty file can be created outside).
describe.skipIf(!existsSync('/proc/self/fd'))('file tools while a directory flips between a real folder and a symlink to outside (issue 14.3)', () => {
  it('write_file never writes outside: each call writes inside, is refused with a clear error, or asks', async () => {
    const root = scratch(workspace({ 'dir/keep.txt': 'k' }));
    const outside = scratch(tempDir('pb-outside-'));
    writeFileSync(join(outside, 'decoy.txt'), 'd');
    symlinkSync(outside, join(root, 'dir.link'));
    const outcomes = await underFlipper(root, 'write_file', (i) => ({ path: `dir/x${i}.txt`, content: `call ${i}\n` }), { allow: { write_file: {} } });

    expect(readdirSync(outside)).toEqual(['decoy.txt']);
    for (const o of outcomes) {
      if (o.kind === 'error') expect(o.text).toMatch(new RegExp(`${REFUSED.source}|^Cannot write file: `));
      if (o.kind !== 'ok') continue;
      const file = realDirs(root)
        .map((d) => join(d, `x${o.i}.txt`))
        .find((f) => existsSync(f));
      expect(file, `c${o.i} said "${o.text}" but no file is inside`).toBeDefined();
      expect(readFileSync(file!, 'utf8')).toBe(`call ${o.i}\n`);
    }
    tally('write_file', outcomes);
  }, 120_000);

  it('read_file never returns the content of a file outside', async () => {
    const files = Object.fromEntries(Array.from({ length: CALLS }, (_, i) => [`dir/r${i}.txt`, `inside ${i}\n`]));
    const root = scratch(workspace(files));
    const outside = scratch(tempDir('pb-outside-'));
    for (let i = 0; i < CALLS; i++) writeFileSync(join(outside, `r${i}.txt`), `OUTSIDE SECRET ${i}\n`);
    symlinkSync(outside, join(root, 'dir.link'));
    const outcomes = await underFlipper(root, 'read_file', (i) => ({ path: `dir/r${i}.txt` }));

    for (const o of outcomes) {
      expect(o.text).not.toContain('OUTSIDE SECRET');
      if (o.kind === 'ok') expect(o.text).toBe(`inside ${o.i}\n`);
      if (o.kind === 'error') expect(o.text).toMatch(new RegExp(`${REFUSED.source}|^Cannot read file: `));
    }
    tally('read_file', outcomes);
  }, 120_000);

  it('edit_file never changes a file outside', async () => {
    const files = Object.fromEntries(Array.from({ length: CALLS }, (_, i) => [`dir/e${i}.txt`, `old ${i}\n`]));
    const root = scratch(workspace(files));
    const outside = scratch(tempDir('pb-outside-'));
    for (let i = 0; i < CALLS; i++) writeFileSync(join(outside, `e${i}.txt`), `old ${i}\n`);
    symlinkSync(outside, join(root, 'dir.link'));
    const outcomes = await underFlipper(root, 'edit_file', (i) => ({ path: `dir/e${i}.txt`, original_content: 'old', new_content: 'new' }), { allow: { edit_file: {} } });

    for (let i = 0; i < CALLS; i++) expect(readFileSync(join(outside, `e${i}.txt`), 'utf8')).toBe(`old ${i}\n`);
    for (const o of outcomes) {
      if (o.kind === 'error') expect(o.text).toMatch(new RegExp(`${REFUSED.source}|^Cannot edit file: `));
      if (o.kind === 'ok') expect(realDirs(root).some((d) => existsSync(join(d, `e${o.i}.txt`)) && readFileSync(join(d, `e${o.i}.txt`), 'utf8') === `new ${o.i}\n`)).toBe(true);
    }
    tally('edit_file', outcomes);
  }, 120_000);

  it('grep never reads a file outside', async () => {
    const files = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`dir/g${i}.txt`, `needle inside ${i}\n`]));
    const root = scratch(workspace(files));
    const outside = scratch(tempDir('pb-outside-'));
    for (let i = 0; i < 10; i++) writeFileSync(join(outside, `g${i}.txt`), `needle OUTSIDE SECRET ${i}\n`);
    symlinkSync(outside, join(root, 'dir.link'));
    const outcomes = await underFlipper(root, 'grep', () => ({ path: root, pattern: 'needle' }));
    for (const o of outcomes) expect(o.text).not.toContain('OUTSIDE SECRET');
    tally('grep', outcomes);
  }, 120_000);

  it('move_file never moves a file out of, or in from, outside', async () => {
    // Even calls move out of the flipping folder, odd ones into it.
    const files: Record<string, string> = { 'moved/.keep': '' };
    for (let i = 0; i < CALLS; i++) files[i % 2 ? `keep/k${i}.txt` : `dir/m${i}.txt`] = `inside ${i}\n`;
    const root = scratch(workspace(files));
    const outside = scratch(tempDir('pb-outside-'));
    for (let i = 0; i < CALLS; i += 2) writeFileSync(join(outside, `m${i}.txt`), `OUTSIDE ${i}\n`);
    const before = readdirSync(outside).sort();
    symlinkSync(outside, join(root, 'dir.link'));
    const outcomes = await underFlipper(root, 'move_file', (i) => (i % 2 ? { source: `keep/k${i}.txt`, destination: `dir/k${i}.txt` } : { source: `dir/m${i}.txt`, destination: `moved/m${i}.txt` }), {
      allow: { move_file: {} },
    });

    expect(readdirSync(outside).sort()).toEqual(before);
    for (let i = 0; i < CALLS; i += 2) expect(readFileSync(join(outside, `m${i}.txt`), 'utf8')).toBe(`OUTSIDE ${i}\n`);
    for (const o of outcomes) {
      if (o.kind === 'error') expect(o.text).toMatch(new RegExp(`${REFUSED.source}|^Cannot move`));
      if (o.kind === 'ok' && o.i % 2 === 0) expect(readFileSync(join(root, 'moved', `m${o.i}.txt`), 'utf8')).toBe(`inside ${o.i}\n`);
    }
    tally('move_file', outcomes);
  }, 120_000);
});

describe('approved writes outside the workspace', () => {
  it('a write approved for a path inside stays inside when the folder becomes a symlink to outside before it runs', async () => {
    const root = scratch(workspace({ 'dir/keep.txt': 'k' }));
    const outside = scratch(tempDir('pb-outside-'));
    const { p } = await boot(root);
    llm().script([{ toolCall: { id: 'i1', name: 'patchbay__write_file', args: { path: 'dir/x.txt', content: 'x\n' } } }], [{ text: 'done' }]);
    const chatId = (await p.request('chat/prompt', { message: 'write inside' })).result.chatId;
    // write_file asks by default; the user is shown dir/x.txt, inside the workspace.
    await p.waitFor((m) => m.params?.content?.type === 'toolCallRun' && m.params.content.id === 'i1', 'toolCallRun');
    renameSync(join(root, 'dir'), join(root, 'dir.real'));
    symlinkSync(outside, join(root, 'dir'));
    p.notify('chat/toolCallApprove', { chatId, toolCallId: 'i1' });
    await p.turnDone(chatId);
    const called = content(p, chatId, 'toolCalled')[0];
    expect(called.error).toBe(true);
    expect(called.outputs[0].text).toMatch(REFUSED);
    expect(readdirSync(outside)).toEqual([]);
  });

  it('a write approved for an ordinary path is refused when its folder becomes a symlink to .git/hooks before it runs', async () => {
    const root = scratch(workspace({ 'dir/keep.txt': 'k', '.git/hooks/README': 'hooks' }));
    const { p } = await boot(root);
    llm().script([{ toolCall: { id: 'h1', name: 'patchbay__write_file', args: { path: 'dir/pre-commit', content: '#!/bin/sh\necho pwned\n' } } }], [{ text: 'done' }]);
    const chatId = (await p.request('chat/prompt', { message: 'write a script' })).result.chatId;
    // The user is shown dir/pre-commit: not a protected path, so the prompt says nothing of hooks.
    const run = await p.waitFor((m) => m.params?.content?.type === 'toolCallRun' && m.params.content.id === 'h1', 'toolCallRun');
    expect(run.params.content.summary ?? '').not.toMatch(/protected/);
    renameSync(join(root, 'dir'), join(root, 'dir.real'));
    symlinkSync(join(root, '.git', 'hooks'), join(root, 'dir'));
    p.notify('chat/toolCallApprove', { chatId, toolCallId: 'h1' });
    await p.turnDone(chatId);
    const called = content(p, chatId, 'toolCalled')[0];
    expect(called.error).toBe(true);
    expect(called.outputs[0].text).toMatch(/leads to a protected path \(\.git .*\) this call was not approved for/);
    expect(readdirSync(join(root, '.git', 'hooks'))).toEqual(['README']);
  });

  it('openctx_annotations approved for a file inside does not read it once its folder leads outside', async () => {
    const root = scratch(workspace({ 'dir/a.ts': 'const a = 1; // TODO inside\n' }));
    const outside = scratch(tempDir('pb-outside-'));
    writeFileSync(join(outside, 'a.ts'), '\n\nconst s = 1; // TODO OUTSIDE SECRET\n');
    const notes = join(import.meta.dirname, '../fixtures/openctx/notes-provider.mjs');
    const { p } = await boot(root, { openctx: { providers: { [notes]: true } }, toolCall: { approval: { ask: { openctx_annotations: {} } } } });
    llm().script([{ toolCall: { id: 'a1', name: 'patchbay__openctx_annotations', args: { path: 'dir/a.ts' } } }], [{ text: 'done' }]);
    const chatId = (await p.request('chat/prompt', { message: 'annotate' })).result.chatId;
    await p.waitFor((m) => m.params?.content?.type === 'toolCallRun' && m.params.content.id === 'a1', 'toolCallRun');
    renameSync(join(root, 'dir'), join(root, 'dir.real'));
    symlinkSync(outside, join(root, 'dir'));
    p.notify('chat/toolCallApprove', { chatId, toolCallId: 'a1' });
    await p.turnDone(chatId);
    const called = content(p, chatId, 'toolCalled')[0];
    expect(called.error).toBe(true);
    expect(called.outputs[0].text).toMatch(/resolves outside the workspace/);
  });

  it('a write the user approved for a path through a symlink to outside is not confined', async () => {
    const root = scratch(workspace({ 'a.txt': 'a' }));
    const outside = scratch(tempDir('pb-outside-'));
    symlinkSync(outside, join(root, 'link'));
    const { p } = await boot(root, { toolCall: { approval: { allow: { write_file: {} } } } });
    llm().script([{ toolCall: { id: 'o1', name: 'patchbay__write_file', args: { path: 'link/approved.txt', content: 'yes\n' } } }], [{ text: 'done' }]);
    const chatId = (await p.request('chat/prompt', { message: 'write outside' })).result.chatId;
    const run = await p.waitFor((m) => m.params?.content?.type === 'toolCallRun' && m.params.content.id === 'o1', 'toolCallRun');
    // Allowed by config, yet asked: the path leads outside.
    expect(run.params.content.manualApproval).toBe(true);
    p.notify('chat/toolCallApprove', { chatId, toolCallId: 'o1' });
    await p.turnDone(chatId);
    expect(content(p, chatId, 'toolCalled')[0].error).toBe(false);
    expect(readFileSync(join(outside, 'approved.txt'), 'utf8')).toBe('yes\n');
  });
});

describe("the OpenCtx host's files provider and symlinks to outside (issue 14.4)", () => {
  it('serves and lists only files that really lie inside the workspace', async () => {
    const root = scratch(workspace({ 'src/ok.ts': 'export const ok = 1;\n' }));
    const outside = scratch(tempDir('pb-outside-'));
    writeFileSync(join(outside, 's.txt'), 'OUTSIDE SECRET s\n');
    writeFileSync(join(outside, 'leakme.txt'), 'OUTSIDE SECRET leak\n');
    mkdirSync(join(outside, 'sub'));
    symlinkSync(outside, join(root, 'link'));
    symlinkSync(join(outside, 'leakme.txt'), join(root, 'leakme.txt'));
    symlinkSync(join(root, 'src', 'ok.ts'), join(root, 'ok-link.ts'));
    const { home } = await boot(root);
    const dir = join(home, '.patchbay', 'openctx');
    const deadline = Date.now() + 10_000;
    while (!existsSync(join(dir, 'address')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const url = readFileSync(join(dir, 'address'), 'utf8').trim().replace(/\/$/, '');
    const token = readFileSync(join(dir, 'token'), 'utf8').trim();
    const call = async (method: string, params: unknown): Promise<any> => {
      const res = await fetch(`${url}/providers/files`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ method, params }),
      });
      expect(res.status).toBe(200);
      return res.json();
    };
    const item = (rel: string) => call('items', { mention: { title: rel, uri: pathToFileURL(join(root, rel)).href } });

    for (const rel of ['link/s.txt', 'leakme.txt']) {
      const answer = await item(rel);
      expect(JSON.stringify(answer)).not.toContain('OUTSIDE SECRET');
      expect(answer.error?.message).toMatch(/resolves outside the workspace roots/);
    }
    expect((await item('src/ok.ts')).result[0].ai.content).toBe('export const ok = 1;\n');
    expect((await item('ok-link.ts')).result[0].ai.content).toBe('export const ok = 1;\n');

    const listed = (await call('mentions', { query: '' })).result.map((m: any) => m.title);
    expect(listed).toContain('src/ok.ts');
    expect(listed).not.toContain('leakme.txt');
    expect(listed.filter((t: string) => t === 'link' || t.startsWith('link/'))).toEqual([]);
  });
});
