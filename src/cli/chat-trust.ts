/**
 * `patchbay chat` asks, before its server starts, whether to trust the folder when its
 * `.patchbay/config.json` holds settings that need trust (src/config/held-back.ts). Only on a
 * terminal: without one it never asks, and the server's warning (on stderr) says what was held back.
 */
import { createInterface } from 'node:readline/promises';
import { heldBack, loadConfig, patchbayHome } from '../config/load.js';
import { heldSettingsList } from '../config/held-back.js';
import { recordTrust, trustRecord } from '../config/trust.js';
import { changedFiles, coveredFilesNow } from '../config/trusted-files.js';
import { escapeControlChars } from '../util/text.js';

/** Can the user be asked (stdin and stderr are a terminal)? */
export function canAsk(): boolean {
  return Boolean(process.stdin.isTTY && process.stderr.isTTY);
}

/**
 * `Trust this folder? [y/N]` on the terminal; true for y/yes, false for anything else. Ctrl-D (the
 * input closed) is a no; Ctrl-C quits with 130, before anything has started.
 */
export async function askTrust(): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  // On Node 20 a pending question never settles when its input closes: raced with the close.
  const closed = new Promise<string>((resolve) => rl.once('close', () => resolve('')));
  let interrupted = false;
  // Without a SIGINT listener readline only pauses the input on Ctrl-C, and the question hangs.
  rl.once('SIGINT', () => {
    interrupted = true;
    rl.close();
  });
  let answer: string;
  try {
    answer = await Promise.race([rl.question('Trust this folder? [y/N] ').catch(() => ''), closed]);
  } finally {
    rl.close();
  }
  if (interrupted) {
    process.stderr.write('\n');
    process.exit(130);
  }
  return /^y(es)?$/i.test(answer.trim());
}

export async function askWorkspaceTrust(cwd: string, configFile: string | undefined): Promise<void> {
  if (!canAsk()) return;
  const home = patchbayHome(process.env);
  const loaded = loadConfig({ roots: [cwd], env: process.env, configFile });
  const pending = heldBack(loaded);
  for (const w of pending) {
    const changed = w.state === 'changed' ? ' (it changed since you trusted this folder)' : '';
    // Hashed before the question: what is trusted is what was there when the user was asked.
    const files = await coveredFilesNow(w.root, { env: process.env, config: loaded.config });
    process.stderr.write(`This folder's ${escapeControlChars(w.file)}${changed} wants to:\n${heldSettingsList(w.settings)}\n`);
    // The hash of what was shown: if the file changes while the user reads, it stays untrusted.
    if (await askTrust()) recordTrust(home, w.root, w.sha256, files);
    else process.stderr.write('Not trusted: those settings stay off (the rest of the file applies).\n');
  }
  // A trusted folder whose agent, skill, command or hook files are new or changed since (issue 31).
  const record = trustRecord(home, cwd);
  if (!record || pending.length) return;
  const files = await coveredFilesNow(cwd, { env: process.env, config: loaded.config });
  const changed = changedFiles(files, record.files);
  if (!changed.length) return;
  const why = record.files ? 'are new or changed since you trusted this folder' : 'were not recorded when you trusted this folder';
  process.stderr.write(
    `These files of this folder ${why}; until you trust them, their auto-approvals, links out of the folder and hook scripts are held back:\n${changed.map((f) => `  - ${escapeControlChars(f)}`).join('\n')}\n`,
  );
  if (await askTrust()) recordTrust(home, cwd, record.sha256, files);
  else process.stderr.write('Not trusted: what they would enable stays off.\n');
}
