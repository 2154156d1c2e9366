/**
 * `patchbay chat` asks, before its server starts, whether to trust the folder when its
 * `.patchbay/config.json` holds settings that need trust (src/config/held-back.ts). Only on a
 * terminal: without one it never asks, and the server's warning (on stderr) says what was held back.
 */
import { createInterface } from 'node:readline/promises';
import { heldBack, loadConfig, patchbayHome } from '../config/load.js';
import { formatHeldSetting } from '../config/held-back.js';
import { recordTrust } from '../config/trust.js';

export async function askWorkspaceTrust(cwd: string, configFile: string | undefined): Promise<void> {
  if (!process.stdin.isTTY || !process.stderr.isTTY) return;
  const pending = heldBack(loadConfig({ roots: [cwd], env: process.env, configFile }));
  for (const w of pending) {
    const changed = w.state === 'changed' ? ' (it changed since you trusted this folder)' : '';
    process.stderr.write(`This folder's ${w.file}${changed} wants to:\n${w.settings.map((s) => `  - ${formatHeldSetting(s)}`).join('\n')}\n`);
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    const answer = await rl.question('Trust this folder? [y/N] ').catch(() => '');
    rl.close();
    if (/^y(es)?$/i.test(answer.trim())) recordTrust(patchbayHome(process.env), w.root, w.sha256);
    else process.stderr.write('Not trusted: those settings stay off (the rest of the file applies).\n');
  }
}
