/**
 * The hooks runner and engine (src/core/hooks/) against real bash processes: exit codes, JSON
 * answers, the timeout killing the whole process group, the order hooks run in, continue:false,
 * matchers, and the merge of preToolCall's updatedInput (ECA docs/config/hooks.md; hooks.clj).
 */
import { isAlive } from '../../src/util/pid.js';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Hooks, parseAnswer, preToolVerdict, postToolVerdict, runAction, type HookRun } from '../../src/core/hooks/index.js';
import type { HookConfig } from '../../src/config/hooks.js';
import type { ChatEvent } from '../../src/core/events.js';
import { removeDir, tempDir } from './tools-helpers.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await removeDir(d);
});

async function dir(): Promise<string> {
  const d = await tempDir('patchbay-hooks-');
  dirs.push(d);
  return d;
}

function engine(root: string, hooks: Record<string, HookConfig>, problems: string[][] = []): Hooks {
  return new Hooks({ hooks: () => hooks, roots: () => [root], dbPath: '/db', executable: '/bin/patchbay', env: process.env, homeDir: root, problems: (l) => problems.push(l) });
}

const shell = (script: string, extra: Partial<HookConfig> = {}): HookConfig => ({ type: 'preRequest', actions: [{ type: 'shell', shell: script }], ...extra });

describe('runAction', () => {
  it('passes the input on stdin and reports exit code, stdout and stderr', async () => {
    const cwd = await dir();
    const r = await runAction({ script: { shell: 'read -r line; echo "got $line in $PWD"; echo warn >&2; exit 2' }, cwd, input: 'hello\n', timeoutMs: 10_000 });
    expect(r).toEqual({ exit: 2, stdout: `got hello in ${cwd}\n`, stderr: 'warn\n' });
  });

  it('runs a file with bash', async () => {
    const cwd = await dir();
    await writeFile(join(cwd, 'h.sh'), 'echo from-file\n');
    expect((await runAction({ script: { file: join(cwd, 'h.sh') }, cwd, input: '', timeoutMs: 10_000 })).stdout).toBe('from-file\n');
  });

  it('a command that does not exist exits 127', async () => {
    const r = await runAction({ script: { shell: 'no-such-command-patchbay-xyz' }, cwd: await dir(), input: '', timeoutMs: 10_000 });
    expect(r.exit).toBe(127);
    expect(r.stderr).toContain('not found');
  });

  it('kills the whole process group at the timeout', async () => {
    const cwd = await dir();
    const r = await runAction({ script: { shell: `sleep 300 & echo $! > child.pid; wait` }, cwd, input: '', timeoutMs: 500 });
    expect(r).toMatchObject({ exit: 1, timedOut: true });
    expect(r.stderr).toMatch(/timed out after 0.5 seconds/);
    const child = Number(readFileSync(join(cwd, 'child.pid'), 'utf8'));
    await expect.poll(() => isAlive(child), { timeout: 5_000 }).toBe(false);
  });

  it('a child left in the background holding the pipes is killed once the shell exited; one that let go of them is not', async () => {
    const cwd = await dir();
    const r = await runAction({ script: { shell: 'sleep 300 & echo $! > held.pid; echo done' }, cwd, input: '', timeoutMs: 30_000 });
    expect(r).toMatchObject({ exit: 0, stdout: 'done\n' });
    const held = Number(readFileSync(join(cwd, 'held.pid'), 'utf8'));
    await expect.poll(() => isAlive(held), { timeout: 5_000 }).toBe(false);
    // A deliberate background job (a notifier) that let go of the pipes runs on.
    await runAction({ script: { shell: 'sleep 300 >/dev/null 2>&1 </dev/null & echo $! > free.pid' }, cwd, input: '', timeoutMs: 30_000 });
    const free = Number(readFileSync(join(cwd, 'free.pid'), 'utf8'));
    await new Promise((r) => setTimeout(r, 300));
    expect(isAlive(free)).toBe(true);
    process.kill(free, 'SIGKILL');
  });

  it('a stop kills it at once', async () => {
    const abort = new AbortController();
    const run = runAction({ script: { shell: 'sleep 300' }, cwd: await dir(), input: '', timeoutMs: 60_000, signal: abort.signal });
    setTimeout(() => abort.abort(), 100);
    expect((await run).exit).toBe(1);
  });

  it('a flood of output or binary garbage is capped and read as text, without failing', async () => {
    const cwd = await dir();
    const flood = await runAction({ script: { shell: `head -c 9000000 /dev/zero | tr '\\0' x; head -c 65536 /dev/urandom` }, cwd, input: '', timeoutMs: 20_000 });
    expect(flood).toMatchObject({ exit: 0, truncated: true });
    expect(flood.stdout.length).toBe(8 * 1024 * 1024);
    const binary = await runAction({ script: { shell: 'head -c 65536 /dev/urandom; head -c 65536 /dev/urandom >&2' }, cwd, input: '', timeoutMs: 20_000 });
    expect(binary.exit).toBe(0);
    expect(typeof parseAnswer(binary.stdout).garbage).toBe('boolean');
  });

  it('a postToolCall answer replacing a large tool result (1 MB) is read whole', async () => {
    const root = await dir();
    const script = `node -e 'process.stdout.write(JSON.stringify({replacedOutput:"r".repeat(1<<20)}))'`;
    const hooks = engine(root, { big: { type: 'postToolCall', actions: [{ type: 'shell', shell: script }] } });
    const [run] = await hooks.trigger('postToolCall', { data: { error: false } });
    expect(postToolVerdict([run!]).replaced).toHaveLength(1 << 20);
  });

  it('a hook that never reads its input does not fail', async () => {
    const r = await runAction({ script: { shell: 'exit 0' }, cwd: await dir(), input: 'x'.repeat(1 << 20), timeoutMs: 10_000 });
    expect(r.exit).toBe(0);
  });
});

describe('parseAnswer', () => {
  it('a JSON object is an answer, plain text is display only, broken JSON is garbage', () => {
    expect(parseAnswer('{"approval":"deny"}\n')).toEqual({ parsed: { approval: 'deny' }, garbage: false });
    expect(parseAnswer('all good\n')).toEqual({ garbage: false });
    expect(parseAnswer('{"a": oops')).toEqual({ garbage: true });
    expect(parseAnswer('[1,2]')).toEqual({ garbage: true });
    expect(parseAnswer('')).toEqual({ garbage: false });
  });
});

describe('Hooks.trigger', () => {
  it('runs the matching hooks alphabetically, actions in order, with the JSON contract on stdin', async () => {
    const root = await dir();
    const log = join(root, 'log');
    const hooks = engine(root, {
      b: shell(`cat > /dev/null; echo b >> ${log}`),
      a: {
        type: 'preRequest',
        actions: [
          { type: 'shell', shell: `cat > ${join(root, 'in.json')}; echo a1 >> ${log}` },
          { type: 'shell', shell: `echo a2 >> ${log}` },
        ],
      },
      other: { type: 'postRequest', actions: [{ type: 'shell', shell: `echo other >> ${log}` }] },
    });
    const runs = await hooks.trigger('preRequest', { chat: { chatId: 'c1', agent: 'code', model: 'fake/m1' }, data: { prompt: 'hi' } });
    expect(runs.map((r) => r.name)).toEqual(['a-1', 'a-2', 'b']);
    expect(readFileSync(log, 'utf8')).toBe('a1\na2\nb\n');
    const input = JSON.parse(readFileSync(join(root, 'in.json'), 'utf8'));
    expect(input).toEqual({
      hook_name: 'a-1',
      hook_type: 'preRequest',
      workspaces: [root],
      cwd: root,
      db_cache_path: '/db',
      session_id: expect.any(String),
      eca_executable: '/bin/patchbay',
      full_model: 'fake/m1',
      chat_id: 'c1',
      agent: 'code',
      behavior: 'code',
      prompt: 'hi',
    });
  });

  it('a successful continue:false ends the chain; exit 2 does not', async () => {
    const root = await dir();
    const hooks = engine(root, { a: shell('exit 2'), b: shell(`echo '{"continue":false,"stopReason":"enough"}'`), c: shell('echo never') });
    const runs = await hooks.trigger('preRequest');
    expect(runs.map((r) => [r.name, r.exit])).toEqual([
      ['a', 2],
      ['b', 0],
    ]);
  });

  it('tool hooks match a regex over server__tool (eca__ for native tools), selectors and argsMatchers', async () => {
    const root = await dir();
    const hooks = engine(root, {
      regex: { type: 'preToolCall', matcher: 'eca__read_.*', actions: [{ type: 'shell', shell: 'true' }] },
      selector: { type: 'preToolCall', matcher: { write_file: { argsMatchers: { path: ['.*\\.md'] } } }, actions: [{ type: 'shell', shell: 'true' }] },
      server: { type: 'preToolCall', matcher: { github: null }, actions: [{ type: 'shell', shell: 'true' }] },
    });
    const names = async (server: string, tool: string, args: Record<string, unknown>, native: boolean) =>
      (await hooks.trigger('preToolCall', { match: { server, tool, args, native } })).map((r) => r.name);
    expect(await names('patchbay', 'read_file', {}, true)).toEqual(['regex']);
    expect(await names('patchbay', 'write_file', { path: 'a.md' }, true)).toEqual(['selector']);
    expect(await names('patchbay', 'write_file', { path: 'a.ts' }, true)).toEqual([]);
    expect(await names('github', 'list_issues', {}, false)).toEqual(['server']);
  });

  it('postToolCall hooks skip a failed tool unless runOnError', async () => {
    const root = await dir();
    const hooks = engine(root, {
      always: { type: 'postToolCall', runOnError: true, actions: [{ type: 'shell', shell: 'true' }] },
      success: { type: 'postToolCall', actions: [{ type: 'shell', shell: 'true' }] },
    });
    expect((await hooks.trigger('postToolCall', { data: { error: true } })).map((r) => r.name)).toEqual(['always']);
  });

  it('a matcher or argsMatchers pattern that does not compile is reported, and the hook matches nothing', async () => {
    const root = await dir();
    const problems: string[][] = [];
    const hooks = engine(
      root,
      {
        broken: { type: 'preToolCall', matcher: 'eca__(read', actions: [{ type: 'shell', shell: 'true' }] },
        args: { type: 'postToolCall', matcher: { eca__read_file: { argsMatchers: { path: ['[a-'] } } }, actions: [{ type: 'shell', shell: 'true' }] },
        fine: { type: 'preToolCall', matcher: 'eca__read_file', actions: [{ type: 'shell', shell: 'true' }] },
      },
      problems,
    );
    hooks.publish();
    expect(problems.at(-1)).toEqual([
      'hooks: "args": matcher "[a-" is not a valid regular expression, so the hook never runs',
      'hooks: "broken": matcher "eca__(read" is not a valid regular expression, so the hook never runs',
    ]);
    const match = { server: 'patchbay', tool: 'read_file', args: { path: 'a' }, native: true };
    expect((await hooks.trigger('preToolCall', { match })).map((r) => r.name)).toEqual(['fine']);
  });

  it('after killAll (shutdown) the running action is killed and no further one starts', async () => {
    const root = await dir();
    const hooks = engine(root, {
      a: { type: 'sessionEnd', actions: [{ type: 'shell', shell: 'echo $$ > a.pid; exec sleep 300' }] },
      b: { type: 'sessionEnd', actions: [{ type: 'shell', shell: 'touch b.ran' }] },
    });
    const runs = hooks.trigger('sessionEnd');
    await expect.poll(() => existsSync(join(root, 'a.pid')) && readFileSync(join(root, 'a.pid'), 'utf8').trim() !== '', { timeout: 5_000 }).toBe(true);
    const pid = Number(readFileSync(join(root, 'a.pid'), 'utf8'));
    hooks.killAll();
    expect((await runs).map((r) => r.name)).toEqual(['a']);
    expect(isAlive(pid)).toBe(false);
    expect(existsSync(join(root, 'b.ran'))).toBe(false);
    // Nor later: a trigger after shutdown runs nothing.
    expect(await hooks.trigger('sessionEnd')).toEqual([]);
    expect(existsSync(join(root, 'b.ran'))).toBe(false);
  });

  it('shows visible runs as started/finished events, hides invisible ones, and reports bad hooks to the board', async () => {
    const root = await dir();
    const problems: string[][] = [];
    const events: ChatEvent[] = [];
    const hooks = engine(
      root,
      {
        a: shell(`echo '{"suppressOutput":true,"systemMessage":"hello"}'`),
        b: shell('no-such-command-patchbay-xyz', { visible: false }),
        c: { type: 'preRequest', actions: [{ type: 'shell', file: 'missing.sh' }] },
      },
      problems,
    );
    hooks.publish();
    expect(problems.at(-1)).toEqual([`hooks: "c": file ${join(root, 'missing.sh')} does not exist`]);
    await hooks.trigger('preRequest', { chat: { chatId: 'c1', emit: (e) => events.push(e) } });
    expect(events.map((e) => e.type)).toEqual(['hookActionStarted', 'hookActionFinished', 'notice', 'notice', 'hookActionStarted', 'hookActionFinished']);
    // suppressOutput drops the block's body, never the block; systemMessage is its own message.
    expect(events[1]).toEqual({ type: 'hookActionFinished', id: (events[0] as { id: string }).id, name: 'a', actionType: 'shell', status: 0 });
    expect(events[2]).toEqual({ type: 'notice', text: "Hook 'a': hello\n\n" });
    expect(events[3]).toMatchObject({ type: 'notice', text: expect.stringMatching(/^hooks: "b" \(preRequest\) its command was not found \(exit 127\)/) });
    // The missing file is said once (publish found it), not again for each run.
    expect(problems.at(-1)).toEqual([expect.stringContaining('"c": file'), expect.stringContaining('"b" (preRequest) its command was not found')]);
  });
});

describe('verdicts', () => {
  const run = (exit: number, parsed?: Record<string, unknown>, stderr = ''): HookRun => ({
    exit,
    stdout: '',
    stderr,
    name: 'h',
    hookType: 'preToolCall',
    visible: true,
    ...(parsed ? { parsed } : {}),
  });

  it('preToolCall: updatedInput merges across hooks (later keys win), exit 2 and deny reject, ask is kept', () => {
    const v = preToolVerdict([run(0, { updatedInput: { a: 1, b: 1 } }), run(0, { updatedInput: { b: 2 }, approval: 'ask' }), run(1, { updatedInput: { c: 3 } })], { a: 0, keep: true });
    expect(v).toEqual({ args: { a: 1, b: 2, keep: true }, ask: true });
    expect(preToolVerdict([run(2, undefined, 'nope\n')], {}).rejected).toBe('nope');
    expect(preToolVerdict([run(0, { approval: 'deny' })], {}).rejected).toBe('Tool call rejected by hook');
    expect(preToolVerdict([run(0, { continue: false, stopReason: 'halt' })], {}).stop).toEqual({ name: 'h', reason: 'halt' });
  });

  it('postToolCall: replacedOutput, exit 2 hides the output, additionalContext is kept', () => {
    expect(postToolVerdict([run(0, { replacedOutput: '', additionalContext: 'ctx' })])).toEqual({ replaced: '', context: ['ctx'] });
    expect(postToolVerdict([run(2)]).replaced).toBe('[Tool output hidden by hook]');
  });
});
