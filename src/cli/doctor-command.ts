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
    await session.modelsReady;
    process.stdout.write(`${await session.doctor()}\n`);
    if (!session.models.length) process.exitCode = 1;
  } finally {
    await session.dispose();
  }
}
