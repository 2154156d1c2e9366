/**
 * A workspace's start-up, in one order for every front end (`Workspace.start`): the config's
 * problems are told, the MCP servers' task begins, the listeners open (the gateway, the OpenCtx
 * host), the session starts (sessionStart hooks), the models are announced once known, the file
 * indexes warm, the sandbox is probed (and said in the log) and the config files are watched. A
 * front end says how through its policy: when the servers start, where messages and failures go.
 */
import type { Workspace } from './workspace.js';

/** How long MCP servers wait for the models to be announced before they start anyway (`servers: 'afterModels'`). */
export const SERVERS_AFTER_MODELS_MAX_MS = 250;

export interface StartPolicy {
  /**
   * The config's problems (invalid config, then settings held back from an untrusted folder),
   * told now. Without it they are the front end's to read when it can say them
   * (`Workspace.configProblems`: ACP says them in the first answer).
   */
  tell?: (problems: ConfigProblems) => void;
  /**
   * `afterModels`: MCP servers start once `modelsReady` has run (spawning them is CPU work that
   * would delay what it sends), or after SERVERS_AFTER_MODELS_MAX_MS if model discovery is slow
   * (ECA). `now`: at once (ACP).
   */
  servers: 'now' | 'afterModels';
  /** The servers task has begun (ECA sends the start-up tasks it held). */
  serversBegan?: () => void;
  /** A listener (a peer's: the OpenCtx host, the provider gateway) could not start. */
  listenerFailed: (peer: string, e: unknown) => void;
  /** The models are known (ECA: `config/updated` and the native tool server). */
  modelsReady?: () => void;
}

export interface ConfigProblems {
  /** `Invalid config in <source> at <key>: …`, errors only (warnings are logged). */
  invalid: string[];
  /** What untrusted workspace config files asked for and did not get, one message per file. */
  held: string[];
}

/** The start-up order (see the file's comment); `Workspace.start` runs it once. */
export function startWorkspace(ws: Workspace, policy: StartPolicy): void {
  if (policy.tell) policy.tell(ws.configProblems());
  let startMcp!: () => void;
  const after = policy.servers === 'now' ? Promise.resolve() : new Promise<void>((r) => (startMcp = r));
  void ws.startServers(after);
  if (policy.servers === 'afterModels') setTimeout(startMcp, SERVERS_AFTER_MODELS_MAX_MS).unref();
  policy.serversBegan?.();
  for (const { peer, started } of ws.startListeners()) void started.catch((e: unknown) => policy.listenerFailed(peer, e));
  ws.startSession();
  void ws.modelsReady.then(() => {
    policy.modelsReady?.();
    if (policy.servers === 'afterModels') setImmediate(startMcp);
  });
  for (const ix of ws.indexes) void ix.warm();
  // Whether commands run in the OS sandbox, or why not and how to fix it, in the log (and in doctor).
  void ws.sandbox.announce(ws.roots);
  // Config files edited while we run apply live (Workspace.reloadConfig).
  ws.watchConfig();
}
