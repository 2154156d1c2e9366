/**
 * The usage ledger at work (core/memory/usage.ts; ECA docs/config/memory.md "Usage tracking"):
 * what a scan observes of memory bodies is recorded, `read_file` opens of memory files are
 * counted, and the index and the consolidation snapshot get each memory's usage.
 *
 * Not counted, as in ECA: grep hits and directory listings (only `read_file` is), writes (a write
 * moves the body's hash anyway), and reads while the chat, or the parent of the subagent chat
 * reading, runs `/memory-consolidate`: maintenance must not inflate the signal it is fed.
 */
import { bodyChanges, isLedgerPath, mergeBodyChanges, memoryRoot, usageFile, UsageLedger, withRead, withUsage, type MemoryEntry, type RankedEntry } from '../core/memory/index.js';
import { errorMessage, logger } from '../util/log.js';

const log = logger('memory');

export class MemoryUsage {
  /** Chats whose `/memory-consolidate` turn runs (until their next prompt that is no command). */
  private readonly consolidating = new Set<string>();
  private ledgerCache: { file: string; ledger: UsageLedger } | undefined;

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly parentOf: (chatId: string) => string | undefined,
  ) {}

  root(): string {
    return memoryRoot(this.env);
  }

  /** The ledger of the memory root now (the root follows the environment, as the folders do). */
  private ledger(): UsageLedger {
    const file = usageFile(this.root());
    if (this.ledgerCache?.file !== file) this.ledgerCache = { file, ledger: new UsageLedger(file) };
    return this.ledgerCache.ledger;
  }

  /** Whether `abs` is the ledger (or its lock or temporary file): never a memory, never the model's to write. */
  isLedger(abs: string): boolean {
    return isLedgerPath(abs, this.root());
  }

  /**
   * `entries` with their usage. A body the ledger has not seen as it is now is recorded (in the
   * background, under the ledger's lock); the entries get the result at once. A steady store
   * writes nothing. A ledger problem leaves the entries dated by their mtimes, unread.
   */
  observe(entries: readonly MemoryEntry[], now = Date.now()): RankedEntry[] {
    try {
      const ledger = this.ledger();
      const known = ledger.read();
      const changes = bodyChanges(entries, known, now);
      // In the background: the prompt does not wait for the lock (update never rejects; it logs).
      if (Object.keys(changes).length) void ledger.update((l) => mergeBodyChanges(l, changes));
      return withUsage(entries, mergeBodyChanges(known, changes));
    } catch (e) {
      log.warn(`memory usage could not be read: ${errorMessage(e)}`);
      return withUsage(entries, {});
    }
  }

  /** A `read_file` of the memory file `abs` in `chatId` (a subagent's chat too). Never throws. */
  async recordRead(chatId: string, abs: string): Promise<void> {
    if (this.isConsolidating(chatId)) return;
    // Awaited: the call's result comes once the read is on disk, so the next turn ranks by it.
    await this.ledger().update((l) => withRead(l, abs, Date.now()));
  }

  startConsolidating(chatId: string): void {
    this.consolidating.add(chatId);
  }

  /** The chat's next prompt that is no command (or its deletion) ends its consolidation. */
  endConsolidating(chatId: string): void {
    this.consolidating.delete(chatId);
  }

  private isConsolidating(chatId: string): boolean {
    // A subagent's own subagents count for the chat at the top too (a chain is short; bounded anyway).
    for (let id: string | undefined = chatId, hops = 0; id !== undefined && hops < 16; id = this.parentOf(id), hops++) {
      if (this.consolidating.has(id)) return true;
    }
    return false;
  }
}
