/** `patchbay doctor`: the same report as `/doctor`, for the current directory as workspace. */
import { pathToFileURL } from 'node:url';
import { parseFlags } from './main.js';
import { Session } from '../server/session.js';
import { logToStderr } from '../util/log.js';

export async function runDoctor(args: string[]): Promise<void> {
  const { flags, error } = parseFlags(args, ['config-file']);
  if (error) {
    process.stderr.write(`${error}\n`);
    process.exitCode = 2;
    return;
  }
  logToStderr(false);
  const session = new Session({
    params: { processId: process.pid, capabilities: {}, workspaceFolders: [{ uri: pathToFileURL(process.cwd()).href, name: 'cwd' }] },
    events: { content() {}, status() {}, opened() {}, cleared() {}, deleted() {}, showMessage() {} },
    editor: {},
    env: process.env,
    configFile: flags['config-file'],
  });
  try {
    session.mcp.startAll();
    await session.modelsReady;
    // Give MCP servers a moment to start so their status is real, not "starting".
    for (let waited = 0; waited < 15_000 && session.mcp.servers().some((s) => s.status === 'starting'); waited += 100) {
      await new Promise((r) => setTimeout(r, 100));
    }
    // Language servers for the workspace's languages too: a server that cannot run says why.
    await session.lsp.probe(AbortSignal.timeout(20_000));
    process.stdout.write(`${await session.doctor()}\n`);
    if (!session.models.length) process.exitCode = 1;
  } finally {
    await session.dispose();
  }
}
