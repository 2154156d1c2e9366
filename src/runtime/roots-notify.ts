/**
 * Telling peers that the workspace folders changed, without making the next change wait on
 * them: a peer that never answers (an MCP server over HTTP that hangs) must not hold back a later
 * change, a removal least of all. Each peer hears of the changes in order (one at a time), each
 * wait bounded by `limitMs`; past it the peer is warned about and the next change goes to it.
 */
import type { RootsChange } from '../shapes/peer.js';
import { within } from '../util/deadline.js';
import { errorMessage } from '../util/log.js';

export interface RootsListener {
  name: string;
  rootsChanged?(change: RootsChange): Promise<void> | void;
}

export const PEER_ROOTS_LIMIT_MS = 5_000;

export class RootsNotifier {
  /** The last change handed to each peer, settled when that peer took it up (or its wait ran out). */
  private readonly chains = new Map<string, Promise<void>>();

  constructor(
    private readonly opts: {
      warn: (message: string) => void;
      /** True once the workspace is being disposed: peers are no longer told. */
      stopped: () => boolean;
      limitMs?: number;
    },
  ) {}

  /** Hands `change` to every listener, after the changes before it; returns at once. */
  tell(listeners: RootsListener[], change: RootsChange): void {
    const limit = this.opts.limitMs ?? PEER_ROOTS_LIMIT_MS;
    for (const peer of listeners) {
      if (!peer.rootsChanged) continue;
      const prev = this.chains.get(peer.name) ?? Promise.resolve();
      const next = prev.then(async () => {
        if (this.opts.stopped()) return;
        const work = Promise.resolve()
          .then(() => peer.rootsChanged?.(change))
          .catch((e: unknown) => this.opts.warn(`${peer.name} could not follow the workspace folder change: ${errorMessage(e)}`));
        await within(work, limit, () => this.opts.warn(`${peer.name} has not followed the workspace folder change after ${limit / 1000} s; going on without waiting for it`));
      });
      this.chains.set(peer.name, next);
    }
  }

  /** Settles once every peer took up every change handed out so far (each wait is bounded). */
  async idle(): Promise<void> {
    await Promise.all(this.chains.values());
  }
}
