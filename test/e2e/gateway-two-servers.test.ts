/**
 * Two `patchbay server`s on one PATCHBAY_HOME (an editor and a terminal): each gateway writes its
 * own run file, the second exiting removes only its own, and a provider process started afterwards
 * (the built SDK, nothing but PATCHBAY_HOME to go on) still reaches the first; with
 * PATCHBAY_WORKSPACE it reaches the one serving that folder, not the newest.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { EcaProc, fakeProviderConfig, runPatchbay, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();
const SDK = pathToFileURL(resolve(import.meta.dirname, '../../dist/provider/index.js')).href;

/** A provider process: binds to the first open chat of the gateway it discovers, prints it, leaves. */
const PROBE = `
const { createProvider } = await import(process.argv[1]);
const p = createProvider({ name: 'probe', reconnect: { initialMs: 50, maxMs: 200, maxAttempts: 40 } });
p.on('error', (e) => process.stderr.write(String(e) + '\\n'));
const info = await p.connect();
process.stdout.write(JSON.stringify(info));
await p.close();
`;

async function probe(home: string, extra: Record<string, string> = {}): Promise<{ sessionId: string }> {
  const env = { PATH: process.env.PATH ?? '', HOME: home, PATCHBAY_HOME: join(home, '.patchbay'), ...extra };
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', PROBE, SDK], { env, encoding: 'utf8', timeout: 20_000 });
  return JSON.parse(stdout) as { sessionId: string };
}

/** Resolves once the server's stderr (log level info in tests) says its gateway listens. */
function listening(p: EcaProc): Promise<string> {
  const re = /provider gateway listening on (ws:\/\/\S+)/;
  return new Promise((res, rej) => {
    const check = () => {
      const m = re.exec(p.stderr);
      if (m) return (p.child.stderr.off('data', check), clearTimeout(t), res(m[1]));
    };
    const t = setTimeout(() => rej(new Error(`gateway not listening; stderr:\n${p.stderr.slice(-2000)}`)), 20_000);
    p.child.stderr.on('data', check);
    check();
  });
}

async function serverWithChat(home: string, root: string): Promise<{ p: EcaProc; url: string; chatId: string }> {
  const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url) }));
  const up = listening(p);
  await p.initialize(root);
  const url = await up;
  llm().script([{ text: 'hello' }]);
  const chatId = (await p.request('chat/prompt', { message: 'hi' })).result.chatId as string;
  await p.turnDone(chatId);
  return { p, url, chatId };
}

describe('two patchbays on one home', () => {
  it("the second exiting leaves the first's gateway findable; PATCHBAY_WORKSPACE picks the one serving that folder", async () => {
    const home = tempDir('pb-home-');
    const rootA = workspace();
    const rootB = workspace();
    const a = await serverWithChat(home, rootA);
    const b = await serverWithChat(home, rootB);
    expect(b.url).not.toBe(a.url);
    const run = join(home, '.patchbay', 'gateway', 'run');
    const files = readdirSync(run).map((f) => JSON.parse(readFileSync(join(run, f), 'utf8')) as { pid: number; url: string; roots: string[] });
    expect(files.map((f) => f.pid).sort()).toEqual([a.p.child.pid, b.p.child.pid].sort());
    expect(files.find((f) => f.pid === a.p.child.pid)).toMatchObject({ url: a.url, roots: [rootA] });

    // `patchbay doctor` on the same home lists both, newest first.
    const doctor = await runPatchbay(['doctor'], { home, cwd: rootA, timeoutMs: 60_000 });
    expect(doctor.stdout).toContain(
      `Provider gateway: not listening here; running for this home (newest first):\n  - ${b.url} (pid ${b.p.child.pid}, ${rootB})\n  - ${a.url} (pid ${a.p.child.pid}, ${rootA})`,
    );

    // Both running: the newest by default, the one with the folder open when asked.
    expect((await probe(home)).sessionId).toBe(b.chatId);
    expect((await probe(home, { PATCHBAY_WORKSPACE: join(rootA, 'src') })).sessionId).toBe(a.chatId);

    expect(await b.p.stop()).toBe(0);
    expect(existsSync(join(run, `${b.p.child.pid}.json`))).toBe(false);
    expect(existsSync(join(run, `${a.p.child.pid}.json`))).toBe(true);
    // The older shared pair now names the first (it used to be deleted: "no gateway token").
    expect(readFileSync(join(home, '.patchbay', 'gateway', 'address'), 'utf8').trim()).toBe(a.url);
    expect(existsSync(join(home, '.patchbay', 'gateway', 'provider-token'))).toBe(true);
    expect((await probe(home)).sessionId).toBe(a.chatId);

    expect(await a.p.stop()).toBe(0);
    expect(readdirSync(run)).toEqual([]);
  });

  // (review) Reading a FIFO blocks until someone writes to it: the server's gateway start and every
  // provider's discovery used to hang on one left in run/.
  it.runIf(process.platform !== 'win32')('a FIFO in run/ neither stops a server from starting nor a provider from finding it', async () => {
    const home = tempDir('pb-home-');
    const run = join(home, '.patchbay', 'gateway', 'run');
    mkdirSync(run, { recursive: true });
    execFileSync('mkfifo', [join(run, '1.json')]);
    const a = await serverWithChat(home, workspace());
    expect((await probe(home)).sessionId).toBe(a.chatId);
    expect(await a.p.stop()).toBe(0);
  });
});
