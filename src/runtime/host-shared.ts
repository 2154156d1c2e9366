/**
 * The host's shared things (shapes/shared.ts), ref-counted by key: the first `use` makes one,
 * later ones borrow it, the last release disposes it. A host's own dispose stops what is left.
 */
import type { SharedLease, SharedThing } from '../shapes/shared.js';
import { errorMessage, logger } from '../util/log.js';

const log = logger('host');

interface Held {
  value: SharedThing;
  refs: number;
}

export class SharedResources {
  private readonly items = new Map<string, Held>();
  /** Released by their last user and still stopping: a forced close reaches them too. */
  private readonly stopping = new Set<SharedThing>();

  use<T extends SharedThing>(key: string, make: () => T): SharedLease<T> {
    let held = this.items.get(key);
    if (!held) {
      held = { value: make(), refs: 0 };
      this.items.set(key, held);
    }
    held.refs++;
    const h = held;
    let released = false;
    return {
      value: h.value as T,
      release: async () => {
        if (released) return;
        released = true;
        if (--h.refs > 0 || this.items.get(key) !== h) return;
        this.items.delete(key);
        this.stopping.add(h.value);
        try {
          await h.value.dispose();
        } finally {
          this.stopping.delete(h.value);
        }
      },
    };
  }

  /** How many users hold `key` now (0: none is made). */
  users(key: string): number {
    return this.items.get(key)?.refs ?? 0;
  }

  async dispose(): Promise<void> {
    const all = [...this.items.values()];
    this.items.clear();
    await Promise.all(all.map((h) => h.value.dispose().catch((e: unknown) => log.error(`stopping a shared listener: ${errorMessage(e)}`))));
  }

  forceClose(): void {
    for (const value of [...[...this.items.values()].map((h) => h.value), ...this.stopping]) {
      try {
        value.forceClose?.();
      } catch (e) {
        log.warn(errorMessage(e));
      }
    }
  }
}
