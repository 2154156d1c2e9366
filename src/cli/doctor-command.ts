/** `patchbay doctor`: the same report as `/doctor`, for the current directory as workspace. */
import { pathToFileURL } from 'node:url';
import { usageError } from './help.js';
import { parseFlags } from './main.js';
import { Session } from '../runtime/workspace.js';
import { logToStderr } from '../util/log.js';

export async function runDoctor(args: string[]): Promise<void> {
  const { flags, error } = parseFlags(args, ['config-file']);
  if (error) {
    usageError('doctor', error);
    return;
  }
  logToStderr(false);
  const session = new Session({
    params: { processId: process.pid, capabilities: {}, workspaceFolders: [{ uri: pathToFileURL(process.cwd()).href, name: 'cwd' }] },
    events: { event() {}, opened() {}, cleared() {}, deleted() {}, showMessage() {} },
    editor: {},
    env: process.env,
    configFile: flags['config-file'],
  });
  try {
    session.mcp.startAll();
    await session.modelsReady;
    // Give MCP servers a moment to start so their status is real, not "starting". Each counts once
    // it has left "starting": a failed one is restarted with backoff and may be starting again.
    const settled = new Set<string>();
    for (let waited = 0; waited < 15_000; waited += 50) {
      for (const s of session.mcp.servers()) if (s.status !== 'starting') settled.add(s.name);
      if (session.mcp.servers().every((s) => settled.has(s.name))) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    // Language servers for the workspace's languages too: a server that cannot run says why.
    await session.lsp.probe(AbortSignal.timeout(20_000));
    process.stdout.write(`${await session.doctor()}\n`);
    if (!session.models.length) process.exitCode = 1;
  } finally {
    await session.dispose();
  }
}
