/**
 * Watches the config files (the user's, each root's `.patchbay/config.json`) so an edit applies
 * without a restart. Editors save by writing a new file and renaming it over the old one, which
 * ends a watch on the file itself: so the folder is watched, and when the folder does not exist
 * yet, its nearest existing parent (re-armed once it appears). inotify/FSEvents, no polling; the
 * watches never keep the process alive. Bursts of events (a save is several) are debounced into
 * one call; the caller compares contents, so a spurious event costs one read of each file.
 */
import { existsSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, relative, sep } from 'node:path';
import { errorMessage, logger } from '../util/log.js';

const log = logger('config-watch');

/** Long enough to take a save's write-rename-chmod as one change, short enough to feel live. */
const DEBOUNCE_MS = 150;

export class ConfigWatcher {
  /** Watched folder → its watch and the names in it that matter. */
  private readonly watches = new Map<string, { watcher: FSWatcher; names: Set<string> }>();
  private timer: NodeJS.Timeout | undefined;
  private disposed = false;

  constructor(
    /** The files to watch, asked anew on each re-arm (roots may change). */
    private readonly files: () => string[],
    private readonly changed: () => void,
  ) {}

  /** Watches what `files()` names now; call again after the list changed. */
  arm(): void {
    if (this.disposed) return;
    const want = new Map<string, Set<string>>();
    for (const file of this.files()) {
      const { dir, name } = nearestExisting(file);
      const names = want.get(dir) ?? new Set<string>();
      names.add(name);
      want.set(dir, names);
    }
    for (const [dir, w] of this.watches) {
      if (want.has(dir)) continue;
      w.watcher.close();
      this.watches.delete(dir);
    }
    for (const [dir, names] of want) {
      const had = this.watches.get(dir);
      if (had) {
        had.names = names;
        continue;
      }
      try {
        // persistent: false: a watch never keeps the process alive.
        const watcher = watch(dir, { persistent: false }, (_event, filename) => this.event(dir, filename));
        watcher.on('error', (e) => {
          log.debug(`watching ${dir}: ${errorMessage(e)}`);
          watcher.close();
          this.watches.delete(dir);
          this.schedule();
        });
        this.watches.set(dir, { watcher, names });
      } catch (e) {
        log.warn(`cannot watch ${dir} for config changes: ${errorMessage(e)}`);
      }
    }
  }

  private event(dir: string, filename: string | Buffer | null): void {
    const w = this.watches.get(dir);
    // No name (some platforms): it may be ours.
    if (!w || filename === null || w.names.has(filename.toString())) this.schedule();
  }

  private schedule(): void {
    if (this.disposed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      // A folder may have appeared (or gone): watch the right one before reading.
      this.arm();
      try {
        this.changed();
      } catch (e) {
        log.warn(`config change: ${errorMessage(e)}`);
      }
    }, DEBOUNCE_MS);
    this.timer.unref();
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
    for (const w of this.watches.values()) w.watcher.close();
    this.watches.clear();
  }
}

/**
 * The folder to watch for `file`: its own when it exists, else the nearest existing parent, with
 * the name in it on the way to the file (`.patchbay` for `<root>/.patchbay/config.json`).
 */
function nearestExisting(file: string): { dir: string; name: string } {
  let dir = dirname(file);
  let name = basename(file);
  while (!existsSync(dir)) {
    const up = dirname(dir);
    if (up === dir) break;
    name = relative(up, dir).split(sep)[0] ?? name;
    dir = up;
  }
  return { dir, name };
}
