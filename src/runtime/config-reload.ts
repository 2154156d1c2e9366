/**
 * Applying a config that changed while patchbay runs (a file edited by the user or by
 * `mcp/addServer` & co., workspace folders added or removed): the config is loaded again and
 * what changed is taken up live — peers reconcile (MCP servers start, restart or stop), models
 * are listed again when providers changed, new problems are reported. A file that stopped being
 * JSON changes nothing: the last good config stays and the error is reported once.
 */
import { formatConfigError, heldBack, type ConfigError } from '../config/load.js';
import { heldBackMessage } from '../config/held-back.js';
import { parseJsonc } from '../config/jsonc.js';
import type { Config } from '../config/schema.js';
import { errorMessage, logger } from '../util/log.js';
import { ConfigWatcher } from './config-watch.js';
import { configFingerprint, type WorkspaceConfig } from './workspace-config.js';

const log = logger('config');

/** What one reload did. */
export interface ConfigReload {
  /** False when no file changed since the last reload (or one is not JSON: see `error`). */
  applied: boolean;
  /** A file that is not JSON: the last good config was kept. */
  error?: string;
}

/** What a reload needs from the workspace. */
export interface ReloadTarget {
  /** The config files as they are named now (user file or `--config-file`, each root's). */
  files(): string[];
  current(): { config: Config; errors: ConfigError[]; held: string[] };
  load(): WorkspaceConfig;
  apply(loaded: WorkspaceConfig): void;
  /** Peers take up the new config; resolves once their stops and starts are under way. */
  reconfigurePeers(): Promise<void>;
  /** Providers whose settings changed: clients rebuilt, models listed again, the front end told. */
  modelsChanged(providers: string[]): Promise<void>;
  report(message: string): void;
}

/**
 * One workspace's live config: reloads serialized, the last files seen (so an event that changed
 * nothing, or our own write seen again by the watcher, does nothing), and the watcher.
 */
export class LiveConfig {
  private reloading: Promise<ConfigReload> = Promise.resolve({ applied: false });
  private readonly last: { fingerprint?: string };
  private watcher: ConfigWatcher | undefined;
  private disposed = false;

  /** `fingerprint`: the files as they were read for the config in use (workspace-config.ts). */
  constructor(
    private readonly t: ReloadTarget,
    fingerprint: string | undefined,
  ) {
    this.last = { fingerprint };
  }

  reload(): Promise<ConfigReload> {
    const run = async (): Promise<ConfigReload> => {
      if (this.disposed) return { applied: false };
      // The roots may have changed: watch their files too.
      this.watcher?.arm();
      return reloadConfig(this.t, this.last);
    };
    const next = this.reloading.then(run, run);
    this.reloading = next.catch(() => ({ applied: false }));
    return next;
  }

  watch(): void {
    if (this.watcher || this.disposed) return;
    const reload = () => void this.reload().catch((e: unknown) => log.warn(`reloading the config: ${errorMessage(e)}`));
    this.watcher = new ConfigWatcher(() => this.t.files(), reload);
    this.watcher.arm();
    // A save between the start-up load and now had no watch to see it: compare once.
    reload();
  }

  dispose(): void {
    this.disposed = true;
    this.watcher?.dispose();
  }
}

/** Reloads, or does nothing when the files read the same as last time (`last` is updated in place). */
export async function reloadConfig(t: ReloadTarget, last: { fingerprint?: string }, settleMs = SETTLE_MS): Promise<ConfigReload> {
  let fingerprint = configFingerprint(t.files());
  if (fingerprint === last.fingerprint) return { applied: false };
  // A save in place truncates the file, then writes it: seen in between (after the watcher's
  // debounce), every server in it would stop and start again. A file that became empty or went
  // away is looked at again once the save has had time to finish.
  if (emptied(last.fingerprint, fingerprint)) {
    await new Promise((r) => setTimeout(r, settleMs));
    fingerprint = configFingerprint(t.files());
    if (fingerprint === last.fingerprint) return { applied: false };
  }
  last.fingerprint = fingerprint;

  for (const { file, text, refused } of JSON.parse(fingerprint) as Seen) {
    // A FIFO or a huge file swapped in: as for a file that is not JSON, the config in use stays.
    if (refused !== undefined) {
      const error = `Invalid config in ${file}: ${refused.replace(/; ignored$/, '')}; patchbay keeps the config it had until the file is fixed`;
      t.report(error);
      return { applied: false, error };
    }
    if (text === null || text.trim() === '') continue;
    const parsed = parseJsonc(text);
    if (parsed.ok) continue;
    const error = `Invalid config in ${file}: ${parsed.message}; patchbay keeps the config it had until the file is fixed`;
    t.report(error);
    return { applied: false, error };
  }

  const before = t.current();
  const loaded = t.load();
  t.apply(loaded);
  // Only what is new is said: the editor heard the rest at start or on an earlier reload.
  const said = new Set([...before.errors.map(formatConfigError), ...before.held]);
  for (const e of loaded.errors) {
    const text = formatConfigError(e);
    if (e.severity !== 'warning' && !said.has(text)) t.report(text);
  }
  for (const m of heldBack(loaded).map(heldBackMessage)) if (!said.has(m)) t.report(m);

  await t.reconfigurePeers();
  const providers = changedKeys(before.config.providers, loaded.config.providers);
  if (providers.length || before.config.defaultModel !== loaded.config.defaultModel) await t.modelsChanged(providers);
  return { applied: true };
}

/** How long a file that became empty or vanished is given to come back (a save in place). */
const SETTLE_MS = 300;

type Seen = Array<{ file: string; text: string | null; refused?: string }>;

/** Did a file that had content have none now (empty or gone)? */
function emptied(before: string | undefined, now: string): boolean {
  if (before === undefined) return false;
  const had = new Map((JSON.parse(before) as Seen).map((f) => [f.file, f.text]));
  return (JSON.parse(now) as Seen).some((f) => (f.text ?? '').trim() === '' && (had.get(f.file) ?? '').trim() !== '');
}

/** Keys whose value differs between two records (added and removed ones too). */
function changedKeys(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
}
