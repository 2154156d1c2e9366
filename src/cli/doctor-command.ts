/** `patchbay doctor`: the same report as `/doctor`, for the current directory as workspace. */
import { usageError } from './help.js';
import { parseFlags } from './flags.js';
import { Workspace } from '../runtime/workspace.js';
import { logToStderr } from '../util/log.js';
import { underDeadline } from '../util/deadline.js';

export async function runDoctor(args: string[]): Promise<void> {
  const { flags, error } = parseFlags(args, ['config-file']);
  if (error) {
    usageError('doctor', error);
    return;
  }
  logToStderr(false);
  // No front end: nothing to ask, no editor, and chat events go nowhere.
  const workspace = await Workspace.create({
    roots: [process.cwd()],
    env: process.env,
    configFile: flags['config-file'],
    frontEnd: { canAsk: false, canShowDiffs: false },
    events: { event() {}, opened() {}, cleared() {}, deleted() {}, showMessage() {} },
  });
  try {
    void workspace.startServers();
    await workspace.modelsReady;
    // Give MCP servers a moment to start and language servers to say whether they can run, so
    // their status is real, not "starting".
    await underDeadline(20_000, [], (signal) => workspace.settle(signal));
    process.stdout.write(`${await workspace.doctor()}\n`);
    if (!workspace.models.length) process.exitCode = 1;
  } finally {
    await workspace.dispose();
  }
}
