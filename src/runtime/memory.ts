/**
 * Durable memory in the workspace (ECA docs/config/memory.md): the write guidance in the system
 * prompt, the index appended to each user turn (and told to the front end when it changes),
 * `/memory-consolidate`, the check on writes into the memory folders, the folders' path trust,
 * and the listing a front end shows. All of it is off until `memory.enabled`; every call reads
 * the config of now, so an edited config or a trusted folder applies at the next prompt.
 */
import { mkdirSync } from 'node:fs';
import type { Config } from '../config/schema.js';
import type { Command, CommandRegistry } from '../core/chat/commands.js';
import type { PromptSources } from '../core/turn/prompt-sections.js';
import type { Tool } from '../shapes/tool.js';
import { textResult } from '../shapes/tool.js';
import {
  CONSOLIDATE_PROMPT,
  consolidateSnapshot,
  memoryDirs,
  memoryGuidance,
  memoryIndex,
  memorySettings,
  memoryWriteRefusal,
  inMemoryDir,
  isLedgerPath,
  rankEntries,
  scanDirs,
  type MemoryDir,
  type MemoryEntry,
  type MemoryIndexItem,
  type SkippedMemory,
} from '../core/memory/index.js';
import { realpathDeepest, resolvePath } from '../util/paths.js';
import { errorMessage, logger } from '../util/log.js';
import { MemoryUsage } from './memory-usage.js';

const log = logger('memory');

/** What the front end hears when a chat's index changed (ECA `memory/indexLoaded`). */
export interface MemoryIndexReport {
  chatId: string;
  count: number;
  totalCount: number;
  items: MemoryIndexItem[];
}

export interface MemoryHost {
  config(): Config;
  roots(): string[];
  env: NodeJS.ProcessEnv;
  prompt: PromptSources;
  commands: CommandRegistry;
  onIndex?(report: MemoryIndexReport): void;
  /** The chat a subagent's chat runs under (its reads count, or not, with its parent's). */
  parentOf?(chatId: string): string | undefined;
}

/** Asked for while memory is off (ECA answers `memory/list` with an error then). */
export class MemoryDisabledError extends Error {
  constructor() {
    super('memory is disabled');
  }
}

/** The file tools whose paths the memory folders' trust covers: reads always, writes in `agent` mode. */
const READS = new Set(['read_file', 'grep', 'directory_tree']);
const WRITES = new Set(['write_file', 'edit_file', 'move_file']);

export class WorkspaceMemory {
  /** What each chat was last told (a signature), so the same index is not told twice. */
  private readonly told = new Map<string, string>();

  /** The usage ledger (./memory-usage.ts): read counts and body-change times. */
  readonly usage: MemoryUsage;

  constructor(private readonly host: MemoryHost) {
    this.usage = new MemoryUsage(host.env, (id) => host.parentOf?.(id));
  }

  install(): void {
    // Stable: the guidance and the folders do not change during a chat (the roots seldom do),
    // so they ride the cached prefix; only the index changes per turn. Subagents get none.
    this.host.prompt.set('memory', (scope) => {
      const s = this.settings();
      if (!s.enabled || scope.subagent) return [];
      return [{ id: 'memory', text: memoryGuidance(s.writeMode, memoryDirs(scope.roots, this.host.env)), stable: true, order: 70 }];
    });
    this.host.commands.live('memory', () => (this.settings().enabled ? [this.consolidateCommand()] : []));
  }

  settings() {
    return memorySettings(this.host.config());
  }

  dirs(): MemoryDir[] {
    return memoryDirs(this.host.roots(), this.host.env);
  }

  /** ECA pre-creates them, so the model writes without a mkdir first; a failure only is logged. */
  private ensureDirs(dirs: MemoryDir[]): void {
    for (const d of dirs) {
      try {
        mkdirSync(d.dir, { recursive: true, mode: 0o700 });
      } catch (e) {
        log.warn(`could not create the memory folder ${d.dir}: ${errorMessage(e)}`);
      }
    }
  }

  /**
   * The index for this user turn of a chat ('' for none), telling the front end when it differs
   * from what that chat was last told. A memory problem never breaks a prompt: it is logged.
   */
  indexFor(chatId: string): string {
    // A prompt that is no command: a /memory-consolidate turn before it is over.
    this.usage.endConsolidating(chatId);
    try {
      const s = this.settings();
      const now = Date.now();
      const index = s.enabled ? rankEntries(this.usage.observe(this.scan(true).entries, now), now) : [];
      const built = memoryIndex(index, s, now);
      this.tell(chatId, { chatId, count: built.count, totalCount: built.totalCount, items: built.items });
      return built.text;
    } catch (e) {
      log.warn(`memory index failed; the prompt goes without it: ${errorMessage(e)}`);
      return '';
    }
  }

  private tell(chatId: string, report: MemoryIndexReport): void {
    const signature = JSON.stringify([report.count, report.totalCount, report.items]);
    const before = this.told.get(chatId);
    // An empty store the chat was never told of says nothing; a change, or a clearing, is told.
    if (before === signature || (before === undefined && report.totalCount === 0 && report.count === 0)) return;
    this.told.set(chatId, signature);
    this.host.onIndex?.(report);
  }

  /** A chat that is gone (deleted) is forgotten. */
  forget(chatId: string): void {
    this.told.delete(chatId);
    this.usage.endConsolidating(chatId);
  }

  private scan(create: boolean): { entries: MemoryEntry[]; skipped: SkippedMemory[] } {
    const dirs = this.dirs();
    if (create) this.ensureDirs(dirs);
    return scanDirs(dirs);
  }

  /** `patchbay doctor` / `/doctor`: whether memory is on, and what it holds. */
  doctorLines(): string[] {
    const s = this.settings();
    if (!s.enabled) return ['Memory: off (set memory.enabled to turn it on)'];
    try {
      const dirs = this.dirs();
      const { entries, skipped } = scanDirs(dirs);
      return [
        `Memory: on (writeMode ${s.writeMode}; index at most ${s.maxEntries} entries, ${s.maxTokens} tokens): ${entries.length} ${entries.length === 1 ? 'memory' : 'memories'}${skipped.length ? `, ${skipped.length} skipped (see /memory-consolidate)` : ''}`,
        ...dirs.map((d) => `  ${d.dir} (${d.label})`),
      ];
    } catch (e) {
      return [`Memory: on, but its folders could not be read: ${errorMessage(e)}`];
    }
  }

  /** `memory/list`: every memory by folder, newest file first; throws MemoryDisabledError while off. */
  list(): { memories: MemoryEntry[]; skipped: SkippedMemory[] } {
    if (!this.settings().enabled) throw new MemoryDisabledError();
    const { entries, skipped } = this.scan(true);
    return { memories: entries, skipped };
  }

  /**
   * Folders a call of this tool may use as if inside the workspace (ECA: reads in the memory
   * folders never ask for being outside; writes and moves do not either in `agent` mode). Only
   * the file tools, and only while memory is on; deny rules, protected paths and the rest apply.
   */
  trustedFolders(tool: Pick<Tool, 'name' | 'server'>): string[] {
    if (tool.server !== 'patchbay') return [];
    const s = this.settings();
    if (!s.enabled) return [];
    if (READS.has(tool.name) || (WRITES.has(tool.name) && s.writeMode === 'agent')) return this.dirs().map((d) => d.dir);
    return [];
  }

  /**
   * `write_file` / `edit_file` refuse content that is no valid memory file, before writing
   * (./core/memory/write-check.ts); they and `move_file` refuse the usage ledger, which is
   * patchbay's bookkeeping and no memory. `read_file` of a memory file counts as a read of it.
   */
  wrapTool(tool: Tool): Tool {
    if (tool.server !== 'patchbay') return tool;
    if (tool.name === 'read_file') return this.countingReads(tool);
    if (tool.name !== 'write_file' && tool.name !== 'edit_file' && tool.name !== 'move_file') return tool;
    return {
      ...tool,
      call: async (args, ctx) => {
        if (this.settings().enabled) {
          const ledger = await this.ledgerArg(args, ctx.roots);
          if (ledger) return textResult(`${ledger} is patchbay's memory usage ledger (its own bookkeeping, not a memory): it is not edited with the file tools.`, true);
          const refusal = await memoryWriteRefusal(tool.name, args, ctx.roots, this.dirs()).catch(() => undefined);
          if (refusal) return textResult(refusal, true);
        }
        return tool.call(args, ctx);
      },
    };
  }

  /** The usage ledger when a path argument of a write names it, as written or through a link. */
  private async ledgerArg(args: Record<string, unknown>, roots: string[]): Promise<string | undefined> {
    for (const key of ['path', 'source', 'destination']) {
      const p = args[key];
      if (typeof p !== 'string' || !p) continue;
      let abs: string;
      try {
        abs = resolvePath(p, roots);
      } catch {
        continue; // the tool itself says what is wrong with the path
      }
      if (this.usage.isLedger(abs)) return abs;
      const real = await realpathDeepest(abs).catch(() => abs);
      const realRoot = await realpathDeepest(this.usage.root()).catch(() => this.usage.root());
      if (isLedgerPath(real, realRoot)) return abs;
    }
    return undefined;
  }

  /** ECA counts `read_file` opens of memory files only: not grep hits, listings or writes. */
  private countingReads(tool: Tool): Tool {
    return {
      ...tool,
      call: async (args, ctx) => {
        const result = await tool.call(args, ctx);
        if (result.error || !this.settings().enabled || typeof args.path !== 'string') return result;
        try {
          const abs = resolvePath(args.path, ctx.roots);
          if (abs.endsWith('.md') && (await inMemoryDir(abs, this.dirs()))) await this.usage.recordRead(ctx.chatId, abs);
        } catch (e) {
          log.warn(`a memory read was not counted: ${errorMessage(e)}`);
        }
        return result;
      },
    };
  }

  private consolidateCommand(): Command {
    return {
      name: 'memory-consolidate',
      description: 'Tidy up memory: merge duplicates, check stale facts, remove secrets, shorten entries (add your own instructions after it).',
      type: 'native',
      arguments: [{ name: 'instructions', description: 'More instructions for this cleanup', required: false }],
      run: async (args, ctx) => {
        if (!this.settings().enabled) return { kind: 'show', text: 'Memory is disabled: set "memory": {"enabled": true} in your config to use it.' };
        const dirs = this.dirs();
        this.ensureDirs(dirs);
        const { entries, skipped } = scanDirs(dirs);
        const extra = args.join(' ').trim();
        // Its reads (and its subagents') are maintenance, not use: not counted until the chat's next prompt.
        this.usage.startConsolidating(ctx.chatId);
        const now = Date.now();
        // `prompts.memoryConsolidate` replaces patchbay's own prompt (ECA's key).
        const prompt = this.host.config().prompts?.memoryConsolidate?.trim() || CONSOLIDATE_PROMPT;
        return {
          kind: 'prompt',
          userText: extra ? `${prompt}\n\nMy added instructions: ${extra}` : prompt,
          contextText: consolidateSnapshot(dirs, this.usage.observe(entries, now), skipped, now),
        };
      },
    };
  }
}
