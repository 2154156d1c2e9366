/**
 * A small typed event emitter. Unlike node's EventEmitter, an `error` without listeners does
 * not throw (the provider decides what to do with it), and a listener that throws does not
 * stop the others: its error goes to `onListenerError`.
 */
/** Event name → listener arguments (an interface works too: no index signature needed). */
export type EventMap<E> = { [K in keyof E]: unknown[] };
export type Listener<A extends unknown[]> = (...args: A) => void;

export class Emitter<E extends EventMap<E>> {
  private readonly listeners: { [K in keyof E]?: Set<Listener<E[K]>> } = {};

  on<K extends keyof E>(event: K, fn: Listener<E[K]>): this {
    const set = this.listeners[event] ?? new Set<Listener<E[K]>>();
    this.listeners[event] = set;
    set.add(fn);
    return this;
  }

  off<K extends keyof E>(event: K, fn: Listener<E[K]>): this {
    this.listeners[event]?.delete(fn);
    return this;
  }

  once<K extends keyof E>(event: K, fn: Listener<E[K]>): this {
    const wrapped: Listener<E[K]> = (...args) => {
      this.off(event, wrapped);
      fn(...args);
    };
    return this.on(event, wrapped);
  }

  protected listenerCount(event: keyof E): number {
    return this.listeners[event]?.size ?? 0;
  }

  protected emit<K extends keyof E>(event: K, ...args: E[K]): void {
    const set = this.listeners[event];
    if (!set) return;
    for (const fn of [...set]) {
      try {
        fn(...args);
      } catch (e) {
        this.onListenerError(event, e);
      }
    }
  }

  protected onListenerError(_event: keyof E, _e: unknown): void {}
}
