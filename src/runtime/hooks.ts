/**
 * The workspace's hooks (core/hooks/): built from the merged config (an untrusted folder's
 * `hooks` are held back by config/held-back.ts before they get here), reported on the runtime
 * board (doctor, and once in each chat), and chatStart's context in the system prompt.
 */
import { Hooks, type HooksEnv } from '../core/hooks/index.js';
import type { PromptSources } from '../core/turn/prompt-sections.js';
import type { RuntimeBoard } from '../core/agent-files/runtime-board.js';
import type { Config } from '../config/schema.js';

export function workspaceHooks(opts: {
  config: () => Config;
  roots: () => string[];
  /** Why a script a workspace folder ships may not run (the folder untrusted, or the script changed since); undefined: it may. */
  untrustedFile: (root: string, path: string) => string | undefined;
  dbPath: string;
  env: NodeJS.ProcessEnv;
  board: RuntimeBoard;
  prompt: PromptSources;
  /** A hook from a workspace's own config runs in the OS sandbox (./spawn-sandbox.ts). */
  sandbox?: HooksEnv['sandbox'];
}): Hooks {
  const hooks = new Hooks({
    hooks: () => opts.config().hooks,
    roots: opts.roots,
    untrustedFile: opts.untrustedFile,
    dbPath: opts.dbPath,
    // What a hook can run to reach patchbay again (ECA's `eca_executable`): the launcher script.
    executable: process.argv[1] ?? process.execPath,
    env: opts.env,
    homeDir: opts.env.HOME,
    problems: (list) => opts.board.setProblems('hooks', list),
    ...(opts.sandbox ? { sandbox: opts.sandbox } : {}),
  });
  opts.board.setSummary('hooks', () => hooks.summary());
  // Stable: chatStart runs before the chat's first request and its context stays for the chat's
  // life, so it belongs in the cached prefix (a resumed chat's new context re-caches once).
  opts.prompt.set('hooks', (scope) => {
    const text = hooks.chatContext(scope.chatId);
    return text ? [{ id: 'hooks:chatStart', text, stable: true, order: 70 }] : [];
  });
  hooks.publish();
  return hooks;
}
