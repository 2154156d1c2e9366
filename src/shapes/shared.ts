/**
 * Things the workspaces of one process share, by key (the provider gateway's listener, the
 * OpenCtx host): the host makes each once, lends it to every workspace that asks, and disposes
 * it when the last one gives it back (runtime/host-shared.ts).
 */

/** A shared thing: stopped when its last user is gone, or at once when the process must end. */
export interface SharedThing {
  dispose(): Promise<void>;
  forceClose?(): void;
}

/** One user's hold on a shared thing. */
export interface SharedLease<T> {
  readonly value: T;
  /** Gives it back (once): the last release disposes it. */
  release(): Promise<void>;
}

/** Makes or lends the thing named `key`. */
export type ShareFn = <T extends SharedThing>(key: string, make: () => T) => SharedLease<T>;
