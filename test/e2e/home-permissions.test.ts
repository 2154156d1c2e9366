/**
 * PATCHBAY_HOME holds chats, tokens and logs: the server makes it 0700 and its files 0600 even
 * under a permissive umask, and tightens a home an older version left world-readable.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

let savedUmask = 0;
beforeAll(() => {
  // Children inherit it: the most permissive umask there is.
  savedUmask = process.umask(0);
});
afterAll(() => {
  process.umask(savedUmask);
});

/** Every path under `dir` whose mode gives group or others any access. */
function exposed(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if ((statSync(p).mode & 0o077) !== 0) out.push(`${relative(dir, p)} ${(statSync(p).mode & 0o777).toString(8)}`);
      if (e.isDirectory()) walk(p);
    }
  };
  if ((statSync(dir).mode & 0o077) !== 0) out.push(`. ${(statSync(dir).mode & 0o777).toString(8)}`);
  walk(dir);
  return out;
}

describe.skipIf(process.platform === 'win32')('PATCHBAY_HOME permissions', () => {
  it('a fresh home, its chats database, log and token files are private under umask 000', async () => {
    const home = tempDir();
    const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url) }));
    await p.initialize(workspace());
    llm().script([{ text: 'hi' }]);
    const chatId = (await p.request('chat/prompt', { message: 'hello' })).result.chatId;
    await p.turnDone(chatId);
    const data = join(home, '.patchbay');
    for (let i = 0; i < 200 && !existsSync(join(data, 'openctx', 'address')); i++) await new Promise((r) => setTimeout(r, 25));
    const names = readdirSync(data);
    expect(names).toEqual(expect.arrayContaining(['patchbay.db', 'logs', 'gateway', 'openctx']));
    expect(exposed(data)).toEqual([]);
  });

  it('a home left world-readable by an older version is tightened', async () => {
    const home = tempDir();
    const data = join(home, '.patchbay');
    mkdirSync(join(data, 'logs'), { recursive: true, mode: 0o755 });
    chmodSync(data, 0o755);
    writeFileSync(join(data, 'logs', 'server.log'), 'old line\n', { mode: 0o644 });
    writeFileSync(join(data, 'patchbay.db'), '', { mode: 0o644 });
    const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url) }));
    await p.initialize(workspace());
    await p.request('chat/list', {});
    expect((statSync(data).mode & 0o777).toString(8)).toBe('700');
    expect((statSync(join(data, 'logs', 'server.log')).mode & 0o777).toString(8)).toBe('600');
    expect((statSync(join(data, 'patchbay.db')).mode & 0o777).toString(8)).toBe('600');
  });
});
