/**
 * Quiet stderr (issue 28, point 12): editors show each stderr line of their agent as an error
 * (agent-shell, the ECA plugins' stderr buffers), so at the default log level `patchbay acp` and
 * `patchbay server` write there only errors; the log file keeps everything. A level asked for
 * (`--log-level`) is still what stderr shows. The harness asks for `info` (cliEnv's
 * PATCHBAY_LOG_LEVEL) for the tests that read the log on stderr: here it is left unset.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, useTempDirs, workspace } from './harness.js';
import { AcpProc, useAcpProcs } from './acp-harness.js';

const scratch = useTempDirs();
const { llm, track } = useFakeLlmSuite();
const trackAcp = useAcpProcs();
const DEFAULT_LEVEL = { PATCHBAY_LOG_LEVEL: undefined };

const logFile = (home: string) => readFileSync(join(home, '.patchbay', 'logs', 'server.log'), 'utf8');
const infoLines = (text: string) => text.split('\n').filter((l) => / INFO \[/.test(l));

/** A whole ACP session: initialize, a session, a prompt with a tool call, the client going away. */
async function acpSession(args: string[] = []) {
  const home = scratch(tempDir());
  const root = scratch(workspace({ 'a.txt': 'alpha\n' }));
  const p = trackAcp(new AcpProc({ home, config: fakeProviderConfig(llm().url), env: DEFAULT_LEVEL, args }));
  await p.initialize();
  const sessionId = await p.newSession(root);
  llm().script([{ toolCall: { id: 'r1', name: 'patchbay__read_file', args: { path: 'a.txt' } } }], [{ text: 'read it' }]);
  expect((await p.prompt(sessionId, 'read a.txt')).stopReason).toBe('end_turn');
  expect(await p.stop()).toBe(0);
  return { p, home };
}

describe('stderr at the default log level', () => {
  it('patchbay acp: no INFO line on stderr over a whole session; the log file has them', async () => {
    const { p, home } = await acpSession();
    expect(infoLines(p.stderr), p.stderr).toEqual([]);
    expect(p.stderr.trim(), 'nothing but errors on stderr').toBe('');
    expect(infoLines(logFile(home)).length).toBeGreaterThan(0);
  });

  it('patchbay acp --log-level info: stderr shows the INFO lines again', async () => {
    const { p } = await acpSession(['--log-level', 'info']);
    expect(infoLines(p.stderr).length).toBeGreaterThan(0);
  });

  it('patchbay server: no INFO line on stderr over a whole session; the log file has them', async () => {
    const home = scratch(tempDir());
    const root = scratch(workspace({ 'a.txt': 'alpha\n' }));
    const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url), env: DEFAULT_LEVEL }));
    await p.initialize(root);
    await p.waitFor((m) => m.method === ECA.configUpdated.method);
    llm().script([{ toolCall: { id: 'r1', name: 'patchbay__read_file', args: { path: 'a.txt' } } }], [{ text: 'read it' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'read a.txt' })).result.chatId as string;
    await p.turnDone(chatId, 1, 30_000);
    expect(await p.stop()).toBe(0);
    expect(infoLines(p.stderr), p.stderr).toEqual([]);
    expect(p.stderr.trim(), 'nothing but errors on stderr').toBe('');
    expect(infoLines(logFile(home)).length).toBeGreaterThan(0);
  });
});
