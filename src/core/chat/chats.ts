/**
 * All chats of a server: creating and resuming them, running prompts (one turn at a time
 * per chat, any number of chats at once), approvals, stop, delete, list and replay.
 */
import { LiveChat } from './chat.js';
import { parseCommandLine, type CommandRegistry } from './commands.js';
import type { ChatDeps } from '../deps.js';
import type { ChatEvent, ChatStatus, TurnOutcome } from '../events.js';
import { replayEvents } from './messages.js';
import { findContentIndex, forkTitle, historyPage, type HistoryPage, type HistoryWindow } from './chat-history.js';
import { addFlag, removeFlag, type FlagResult } from './chat-flags.js';
import { newId, rememberUserMessage } from '../turn/turn.js';
import { resetWindow } from '../turn/compaction.js';
import { unpin } from '../turn/pinned-prompt.js';
import { hookedTurn } from '../hooks/turn-hooks.js';
import { clearsAtNextPrompt } from '../tools/native/task-lists.js';
import { EMPTY_TASK_LIST, taskDetails } from '../tools/native/task-list.js';
import { rollbackChat, type RollbackInclude, type RollbackResult } from './rollback.js';
import { ChatRunningElsewhereError } from '../persistence.js';
import { promptImages } from '../turn/prompt-images.js';
import { createSeededChat, inlineChoices, type NewChatSeed } from './inline-chat.js';
import { adoptRoots, chatRootsDeps, chatWhere, namedRoots, recordRoots, rootsOf, storedOwnRoots, type RootsInput } from './chat-roots.js';
import { errorMessage, logger } from '../../util/log.js';
import type { ModelEntry } from '../../shapes/llm.js';
import type { Context as ChatContext } from '../../shapes/context.js';
import type { Agent } from '../../shapes/agent.js';
import type { StoredMessage } from './stored-message.js';
import type { ChildSpec } from '../subagents/runner.js';
import { withSubagents, type ReplayItem } from '../subagents/replay.js';
import { validVariant, variantNames } from '../../shapes/variants.js';

export { noModelMessage } from '../turn/no-model.js';
import { noModelMessage } from '../turn/no-model.js';
import { generateTitle as modelTitle } from './chat-title.js';

const log = logger('chats');
/** An inject burst is gathered until this long passes without another… */
const INJECT_QUIET_MS = 100;
/** …or this long after its first, whichever comes first. */
const INJECT_GATHER_MAX_MS = 1_000;

/** A prompt, as any façade hands it to core. */
export interface PromptInput {
  /** A new chat gets this id when given (a client may mint it); else one is made up. */
  chatId?: string;
  message: string;
  /** A model id (`provider/model`, or the model's own name); else the chat's, the selected, the default. */
  model?: string;
  agent?: Agent;
  contexts?: ChatContext[];
  /** The client's id for the user message, given back in its `userMessage` event. */
  contentId?: string;
  /** Trust mode for this chat from now on (see `update`); a new chat without it takes `chat.defaultTrust`. */
  trust?: boolean;
  /**
   * The model variant for this turn and the chat's from now on (ECA sends the one the editor
   * shows with every prompt; null: none). Omitted: the chat keeps its own.
   */
  variant?: string | null;
  /** The message is text for the model even when it starts with `/` (a subagent's task). */
  literal?: boolean;
  /** The workspace folder a new chat belongs to (an ACP session's `cwd`); default: the first workspace folder. */
  folder?: string;
  /** How a new chat starts other than empty (an inline chat, `inlinePrompt`); ignored for a chat that exists. */
  seed?: NewChatSeed;
  /** Further folders a new chat was started with (an ACP session's `additionalDirectories`). */
  additionalFolders?: string[];
  /**
   * The chat's working folder (an ACP session's `cwd`): relative paths, shell commands and hooks
   * run there. With `roots`, the chat has folders of its own, kept across prompts and restarts
   * (./chat-roots.ts); without both, it uses the workspace's folders as they are at each turn.
   */
  cwd?: string;
  /** The chat's folders (cwd first when not given apart): containment and the file tools' confinement. */
  roots?: string[];
}

/**
 * A prompt taken: `started` (queued or running), `noModel` (none configured: the turn ends at
 * once with `error`), `shuttingDown`. `done` resolves when its turn is over, with how it ended.
 */
export interface TurnHandle {
  chatId: string;
  model: string;
  status: 'started' | 'noModel' | 'shuttingDown';
  done: Promise<TurnOutcome>;
}

export interface ChatSummary {
  id: string;
  title?: string;
  status: ChatStatus;
  createdAt?: number;
  updatedAt?: number;
  model?: string;
  messageCount: number;
  /** The workspace folder it was started in, when recorded. */
  folder?: string;
  /** `inline` for a chat made by `inlinePrompt`; unset for a regular chat. */
  kind?: 'inline';
  /** The further folders it was started or last loaded with, when recorded. */
  additionalFolders?: string[];
}

/** A chat resumed by `open`: what its view shows and what its next prompt uses. */
export interface OpenedChat {
  id: string;
  title?: string;
  /** The chat's model, when it is still among the configured ones. */
  model?: string;
  agent: Agent;
  /** Trust mode (see `update`). */
  trust: boolean;
  /** The model's variants, and the chat's one when the model still has it. */
  variants: string[];
  variant: string | null;
  /** The window replayed, when one was asked for (its cursors, or why nothing was replayed). */
  page?: HistoryPage;
}

/** What a model change leaves selected: the model's variants and the one to show (null: none). */
export interface VariantSelection {
  /** The chat it applies to; absent: the change was for new chats (no such chat, or none named). */
  chatId?: string;
  variants: string[];
  variant: string | null;
}

export class ChatService {
  private readonly live = new Map<string, LiveChat>();
  /** The agent/model the editor selected for new chats. */
  private selectedAgent: Agent | undefined;
  private selectedModel: string | undefined;
  private disposed = false;
  /** Chats with a turn started by `inject` queued or running: later injects steer it. */
  private readonly injectQueued = new Set<string>();
  /** Inject bursts into idle chats, being gathered into one turn. */
  private readonly gathering = new Map<string, { quiet: NodeJS.Timeout; max: NodeJS.Timeout }>();

  constructor(
    private readonly deps: ChatDeps,
    private readonly commands: CommandRegistry,
  ) {}

  /** The chat by id: in memory, else loaded from the store, else undefined. */
  /** A chat's stored messages as held in memory (read from the store once, when the chat is first loaded). */
  messages(chatId: string): StoredMessage[] {
    return this.load(chatId)?.stored ?? [];
  }

  private load(id: string): LiveChat | undefined {
    const cached = this.live.get(id);
    if (cached) return cached;
    const rec = this.deps.store.getChat(id);
    if (!rec) return undefined;
    const chat = new LiveChat(id, this.deps.store.messages(id), {
      title: rec.title,
      model: rec.model,
      agent: rec.agent === 'plan' ? 'plan' : 'code',
      usage: rec.usage,
      trust: rec.trust,
      variant: rec.variant,
      parentId: rec.parentChatId,
      kind: rec.kind,
      roots: storedOwnRoots(this.deps.store, id),
    });
    this.live.set(id, chat);
    return chat;
  }

  private resolveModel(requested: string | undefined, chat: LiveChat | undefined): ModelEntry | undefined {
    const models = this.deps.models();
    const find = (id: string | undefined) => id && (models.find((m) => m.id === id) ?? models.find((m) => m.modelName === id || m.id.endsWith(`/${id}`)));
    return find(requested) || find(chat?.model) || find(this.selectedModel) || this.deps.defaultModel();
  }

  prompt(params: PromptInput): TurnHandle {
    if (this.disposed) return { chatId: params.chatId ?? '', model: '', status: 'shuttingDown', done: Promise.resolve({ stopReason: 'cancelled' }) };
    const agent = params.agent;
    const existing = params.chatId ? this.load(params.chatId) : undefined;
    const entry = this.resolveModel(params.model, existing);
    // A subagent's task is text for its model, never a /command (ECA prompts the child directly).
    const command = params.literal ? undefined : parseCommandLine(params.message);
    const known = command && this.commands.find(command.name);
    if (!entry && !known) {
      // Say it in the chat too (not every editor shows $/showMessage) and end the "turn" so the
      // editor's spinner stops.
      const chatId = existing?.id ?? params.chatId ?? newId();
      const text = noModelMessage(this.deps.heldModels?.());
      this.deps.events.showMessage('warning', text);
      const outcome: TurnOutcome = { stopReason: 'error', error: text };
      const done = new Promise<TurnOutcome>((resolve) =>
        setImmediate(() => {
          this.deps.events.event(chatId, { type: 'error', text });
          this.deps.events.event(chatId, { type: 'turnEnded', ...outcome });
          resolve(outcome);
        }),
      );
      return { chatId, model: params.model ?? '', status: 'noModel', done };
    }
    let chat = existing;
    const named = namedRoots(params, this.deps.roots());
    if (!chat) {
      chat = this.newChat(
        params.chatId ?? newId(),
        {
          agent: agent ?? this.selectedAgent ?? this.deps.config().chat.defaultAgent,
          model: entry?.id,
          folder: params.folder,
          ...(params.additionalFolders?.length ? { additionalFolders: params.additionalFolders } : {}),
          ...(params.seed ? { seed: params.seed } : {}),
          ...(named ? { roots: named } : {}),
        },
        params.trust === undefined,
      );
      if (params.chatId) this.deps.events.opened(chat.id, chat.title);
    }
    // Applies at once, to the calls of a turn already running too.
    if (params.trust !== undefined) this.setTrust(chat, params.trust);

    const queuedIn = chat.generation;
    let settle!: (o: TurnOutcome) => void;
    const done = new Promise<TurnOutcome>((r) => (settle = r));
    const run = async () => {
      chat.queued--;
      // Deleted, cleared or shutting down since this prompt was queued: drop it.
      if (this.disposed || chat.generation !== queuedIn) return settle({ stopReason: 'cancelled' });
      if (chat.subagent?.stopped) return ((chat.subagent.stopped = false), settle({ stopReason: 'cancelled' }));
      // The user message's id names it for rollback, fork and flags, so it must be unique in the
      // chat: a client's id is kept only when new there (ECA always mints one; a client numbering
      // its requests from 0 again after a reload would make a rollback cut at the wrong message).
      // Decided when the turn starts, so prompts queued together are checked against each other.
      const cid = params.contentId !== undefined && !this.hasContentId(chat, params.contentId) ? params.contentId : newId();
      // Agent and model apply from this turn on; a turn already running keeps its own.
      if (agent) chat.agent = agent;
      if (entry) chat.model = entry.id;
      // So do the folders it names (./chat-roots.ts).
      adoptRoots(this.deps.store, chat, named);
      // As ECA (chat.clj `prompt`): the variant a prompt names is the one its chat uses from now on.
      if (params.variant !== undefined) chat.variant = params.variant ?? undefined;
      const deps = this.turnDeps(chat);
      deps.store.updateChat(chat.id, { model: chat.model, agent: chat.agent, variant: chat.variant ?? null });
      recordRoots(deps.store, chat, deps.roots());
      const abort = new AbortController();
      chat.turn = { abort };
      this.setStatus(chat, 'running', deps);
      const emit = (e: ChatEvent) => deps.events.event(chat.id, e);
      const tellProblems = () => {
        // A subagent's chat shows inside its parent's call: the parent was told already.
        if (chat.parentId) return;
        for (const p of deps.problems?.() ?? []) {
          if (chat.shownProblems.has(p)) continue;
          chat.shownProblems.add(p);
          emit({ type: 'notice', text: p });
        }
      };
      let outcome: TurnOutcome = { stopReason: 'end_turn' };
      try {
        if (known) {
          emit({ type: 'userMessage', text: params.message, id: cid });
          tellProblems();
          const ran = await known.run(command.args, { chatId: chat.id, chat, deps, signal: abort.signal });
          if (ran.kind === 'show') emit({ type: 'notice', text: ran.text });
          else if (entry) {
            await deps.toolsReady?.(chat.id, abort.signal);
            // The prompt a command renders is a prompt like any other: stored, then through the prompt hooks.
            const user = rememberUserMessage(chat, deps.store, ran.userText, cid);
            user.attachContext(ran.contextText ?? '');
            outcome = await hookedTurn(chat, entry, { userText: ran.userText, contentId: cid, userStored: true }, deps, abort, user);
          } else {
            deps.events.showMessage('warning', noModelMessage(deps.heldModels?.()));
            outcome = { stopReason: 'error', error: noModelMessage(deps.heldModels?.()) };
          }
        } else if (entry) {
          // ECA's order (chat.clj `prompt`): the finished list is cleared, then the user message.
          if (clearsAtNextPrompt(chat.stored)) emit({ type: 'taskListCleared', details: taskDetails(EMPTY_TASK_LIST) });
          // Stored before the editor shows it: a kill while contexts load loses nothing shown.
          const user = rememberUserMessage(chat, deps.store, params.message, cid);
          emit({ type: 'userMessage', text: params.message, id: cid });
          tellProblems();
          // MCP tools and resources of servers still starting (e.g. under npx) are waited for.
          await deps.toolsReady?.(chat.id, abort.signal);
          const { images, rest: contexts } = await promptImages(this.withUpdates(chat, params.contexts ?? []), entry, deps.roots(), (text) => emit({ type: 'notice', text }));
          const [rendered, auto] = await Promise.all([
            contexts.length ? deps.renderContexts(contexts, abort.signal) : undefined,
            deps.messageContext?.(params.message, abort.signal).catch(() => '') ?? '',
          ]);
          for (const err of rendered?.errors ?? []) emit({ type: 'notice', text: `Context skipped: ${err}` });
          // Durable memory's index trails the contexts (not for a subagent: its parent has it).
          const memory = chat.parentId ? '' : (deps.memoryIndex?.(chat.id) ?? '');
          user.attachContext([rendered?.text, auto, memory].filter(Boolean).join('\n\n'), images);
          outcome = await hookedTurn(chat, entry, { userText: params.message, contentId: cid, userStored: true }, deps, abort, user);
        }
      } catch (e) {
        log.error(`chat ${chat.id}: turn failed: ${errorMessage(e)}`);
        const text = `Internal error: ${errorMessage(e)}`;
        emit({ type: 'error', text });
        outcome = { stopReason: 'error', error: text };
      } finally {
        chat.approvals.settleAll();
        // Stopped, deleted, cleared or shut down: whatever else happened, the turn was cancelled.
        if (abort.signal.aborted) outcome = { stopReason: 'cancelled' };
        chat.turn = undefined;
        // A steer the model never read is dropped: ECA's client sends it again as a prompt once the
        // turn has ended (lifecycle.clj `finish-chat-prompt!`), so running it here would run it twice.
        chat.steer = undefined;
        // `turnEnded` tells façades the chat is idle: no separate status event.
        this.setStatus(chat, 'idle', deps, false);
        emit({ type: 'turnEnded', ...outcome });
        if (this.live.has(chat.id)) this.deps.lifecycle?.idle(chat.id);
        settle(outcome);
      }
      // Injected events that arrived after the last model step become the next prompt (not after a stop).
      const injected = chat.injected.splice(0);
      if (injected.length && !abort.signal.aborted && this.live.has(chat.id)) this.prompt({ chatId: chat.id, message: injected.join('\n\n') });
      if (!chat.title && entry && !known && !chat.parentId) void this.generateTitle(chat, entry, params.message);
    };
    // One turn per chat at a time; the response goes out before the turn's first notification.
    chat.queued++;
    chat.queue = chat.queue
      .then(() => new Promise<void>((r) => setImmediate(r)))
      .then(run)
      .catch((e: unknown) => {
        log.error(`chat ${chat.id}: ${errorMessage(e)}`);
        settle({ stopReason: 'error', error: `Internal error: ${errorMessage(e)}` });
      });
    return { chatId: chat.id, model: entry?.id ?? '', status: 'started', done };
  }

  /** A new chat, stored at once (empty until its first prompt). `defaultTrust`: the front end gave no trust for it, so the configured default applies (as ECA does). */
  private newChat(
    id: string,
    init: { agent: Agent; model?: string; variant?: string; folder?: string; additionalFolders?: string[]; seed?: NewChatSeed; roots?: string[] },
    defaultTrust: boolean,
  ): LiveChat {
    const { seed } = init;
    const rec = { id, model: init.model, agent: init.agent, ...chatWhere(init, this.deps.roots()) };
    // An inline chat may start with a copy of another chat's history (./inline-chat.ts).
    const stored = seed ? createSeededChat(this.deps.store, rec, seed) : (this.deps.store.createChat(rec), []);
    const chat = new LiveChat(id, stored, {
      agent: init.agent,
      ...(init.model ? { model: init.model } : {}),
      ...(init.variant ? { variant: init.variant } : {}),
      ...(seed ? { title: seed.title, kind: seed.kind } : {}),
      ...(init.roots ? { roots: init.roots } : {}),
    });
    recordRoots(this.deps.store, chat, this.deps.roots());
    this.live.set(chat.id, chat);
    if (init.variant) this.deps.store.updateChat(chat.id, { variant: init.variant });
    this.deps.lifecycle?.created(chat.id);
    if (defaultTrust && this.deps.config().chat.defaultTrust) this.setTrust(chat, true);
    return chat;
  }

  /**
   * A chat made before its first prompt (ACP `session/new`): stored empty with its folder and the
   * choices made for it, so it is listed, and opened or resumed after a restart, as a prompted one
   * is. An id already taken is left as it is.
   */
  create(id: string, init: { agent: Agent; model?: string; variant?: string; folder?: string; additionalFolders?: string[] } & RootsInput): void {
    if (this.disposed || this.load(id)) return;
    const { cwd, roots, ...rest } = init;
    const named = namedRoots({ cwd, roots }, this.deps.roots());
    this.newChat(id, { ...rest, ...(named ? { roots: named } : {}) }, true);
  }

  /** The folders a chat uses now (./chat-roots.ts): its own, else the workspace's; the workspace's for an unknown chat. */
  rootsOf(chatId: string): string[] {
    return rootsOf(this.load(chatId) ?? {}, () => this.deps.roots());
  }

  /**
   * Gives a stored chat its own folders from now on (an ACP `session/load` or `session/resume`
   * in a `cwd`); naming none leaves it as it is. False for an unknown chat.
   */
  useRoots(chatId: string, input: RootsInput): boolean {
    const chat = this.load(chatId);
    if (!chat) return false;
    adoptRoots(this.deps.store, chat, namedRoots(input, this.deps.roots()));
    return true;
  }

  /**
   * A stored chat made live again without replaying it (ACP `session/resume`: the client keeps
   * its view): what `open` answers, and undefined as `open` is (unknown, or a subagent's).
   */
  resume(chatId: string): OpenedChat | undefined {
    const chat = this.load(chatId);
    if (!chat || chat.parentId !== undefined) return undefined;
    const entry = chat.model ? this.deps.models().find((m) => m.id === chat.model) : undefined;
    return {
      id: chat.id,
      agent: chat.agent,
      trust: chat.trust,
      variants: variantNames(entry),
      variant: validVariant(entry, chat.variant),
      ...(chat.title ? { title: chat.title } : {}),
      ...(entry ? { model: entry.id } : {}),
    };
  }

  /**
   * `chat/inlinePrompt` (./inline-chat.ts): a prompt in a chat of kind `inline`, made on first use
   * (with a copy of `sourceChatId`'s history when given, never replayed) and steered by the
   * `chatInline` config. On a regular chat's id it is a plain prompt, as in ECA.
   */
  inlinePrompt(params: PromptInput & { sourceChatId?: string }): TurnHandle {
    const { sourceChatId, ...input } = params;
    const existing = input.chatId ? this.load(input.chatId) : undefined;
    if (existing && existing.kind !== 'inline') return this.prompt(input);
    const source = !existing && sourceChatId ? this.load(sourceChatId) : undefined;
    if (!existing && sourceChatId && !source) log.warn(`inline chat ${input.chatId ?? ''}: no chat ${sourceChatId} to copy; it starts empty`);
    return this.prompt({ ...input, ...inlineChoices(input, this.deps.config().chatInline, !existing, source) });
  }

  /**
   * The prompt's contexts plus earlier-referenced ones whose content changed since (e.g. an MCP
   * resource the server reported updated), so the next turn sees the new content.
   */
  private withUpdates(chat: LiveChat, contexts: ChatContext[]): ChatContext[] {
    const key = (c: ChatContext) => (c.type === 'resource' ? `${c.server}\u0000${c.uri}` : undefined);
    const current = new Set(contexts.map(key));
    const updated = this.deps.updatedContexts(chat.referenced.filter((c) => !current.has(key(c))));
    for (const c of contexts) {
      if (c.type === 'resource' && !chat.referenced.some((r) => key(r) === key(c))) chat.referenced.push(c);
    }
    return [...contexts, ...updated];
  }

  private setStatus(chat: LiveChat, status: ChatStatus, deps: ChatDeps = this.deps, announce = true): void {
    chat.status = status;
    if (announce) deps.events.event(chat.id, { type: 'status', status });
    if (status === 'stopping') return;
    try {
      deps.store.updateChat(chat.id, { status: status === 'running' ? 'running' : 'idle' });
    } catch (e) {
      log.error(`chat ${chat.id}: could not save its status: ${errorMessage(e)}`);
    }
  }

  /**
   * The deps one turn uses: once the chat is deleted or cleared (its generation moves on), the
   * turn's remaining writes and notifications are dropped instead of landing in the wrong place.
   */
  private turnDeps(chat: LiveChat): ChatDeps {
    const gen = chat.generation;
    const live = () => chat.generation === gen;
    const { store, events } = this.deps;
    return {
      ...this.deps,
      // The chat's folders, or the workspace's read live (./chat-roots.ts).
      ...chatRootsDeps(chat, this.deps),
      store: {
        ...bindAll(store),
        appendMessage: (id, m, rec) => (live() ? store.appendMessage(id, m, rec) : 0),
        replaceMessage: (id, seq, m) => live() && store.replaceMessage(id, seq, m),
        saveToolCall: (rec) => live() && store.saveToolCall(rec),
        addFileCheckpoint: (id, call, change) => live() && store.addFileCheckpoint(id, call, change),
        updateChat: (id, patch) => live() && store.updateChat(id, patch),
      },
      events: {
        ...bindAll(events),
        // A subagent's chat names its parent in everything it tells (ECA `parentChatId`).
        event: (id, e) => live() && events.event(id, e, chat.parentId),
        together: (fn) => (events.together ? events.together(fn) : fn()),
      },
    };
  }

  /** The user approved a waiting tool call (`forSession`: and every call of that tool in this chat). */
  approve(chatId: string, toolCallId: string, forSession = false): boolean {
    const answered = this.live.get(chatId)?.approvals.respond(toolCallId, { approved: true, saveForSession: forSession }) ?? false;
    if (!answered) log.warn(`approve: no tool call ${toolCallId} waiting in chat ${chatId}`);
    return answered;
  }

  /** The user rejected a waiting tool call (`forSession`: and every later call of that tool in this chat, unasked). */
  reject(chatId: string, toolCallId: string, forSession = false): boolean {
    const answered = this.live.get(chatId)?.approvals.respond(toolCallId, { approved: false, reason: 'user', saveForSession: forSession }) ?? false;
    if (!answered) log.warn(`reject: no tool call ${toolCallId} waiting in chat ${chatId}`);
    return answered;
  }

  stop(chatId: string): void {
    const chat = this.live.get(chatId);
    chat?.injected.splice(0);
    // A subagent whose turn is still queued (its parent stopped right as it spawned it) must not start after the stop.
    if (!chat?.turn && chat?.subagent && chat.queued > 0) chat.subagent.stopped = true;
    if (!chat?.turn) return;
    chat.steer = undefined;
    this.setStatus(chat, 'stopping');
    chat.turn.abort.abort();
    chat.approvals.settleAll();
  }

  delete(chatId: string): void {
    // Its subagents' chats go with it (the store drops their rows with the parent's).
    for (const child of [...this.live.values()]) if (child.parentId === chatId) this.delete(child.id);
    const chat = this.live.get(chatId);
    if (chat) {
      chat.generation++;
      chat.injected.splice(0);
      chat.steer = undefined;
      chat.turn?.abort.abort();
      chat.approvals.settleAll();
      this.live.delete(chatId);
    }
    this.deps.store.deleteChat(chatId);
    this.deps.events.deleted(chatId);
    this.deps.lifecycle?.ended(chatId);
  }

  /**
   * The chat is worked on in another workspace now (an ACP session loaded in other folders):
   * dropped from memory here, with its subagents', so a later use here reads the store afresh.
   * Only while idle (false otherwise); the store keeps it.
   */
  forget(chatId: string): boolean {
    const chat = this.live.get(chatId);
    if (!chat || chat.busy() || this.gathering.has(chatId)) return false;
    for (const child of [...this.live.values()]) if (child.parentId === chatId) this.forget(child.id);
    this.live.delete(chatId);
    return true;
  }

  /**
   * A subagent's chat for a `spawn_agent` call of `spec.parentId` (core/subagents/runner.ts): stored
   * with a link to its parent, with the parent's trust, and its one turn started with the task.
   */
  startSubagent(spec: ChildSpec): { model: string; done: Promise<TurnOutcome> } | { error: string } {
    const parent = this.live.get(spec.parentId);
    if (!parent || this.disposed) return { error: 'The parent chat is gone.' };
    const requested = spec.model ?? spec.def.model;
    const entry = this.resolveModel(requested, parent);
    // An agent's or a call's model that is not configured is an error the parent's model reads, not a silent fallback.
    const named = (m: ModelEntry) => !requested || m.id === requested || m.modelName === requested || m.id.endsWith(`/${requested}`);
    if (!entry || !named(entry)) {
      const offered = this.deps.models().map((m) => m.id);
      return { error: `Model "${requested ?? ''}" is not available. Available models: ${offered.join(', ') || 'none'}.` };
    }
    // Read-only definitions (explorer), and every subagent of a `plan` chat, only read.
    const agent: Agent = spec.def.readOnly || parent.agent === 'plan' ? 'plan' : 'code';
    // A subagent works in its parent's folders (its own, or the workspace's as they are).
    const chat = new LiveChat(spec.id, [], { agent, model: entry.id, trust: parent.trust, parentId: parent.id, variant: spec.variant ?? spec.def.variant, sessionOf: parent, roots: parent.roots });
    chat.subagent = { def: spec.def, onStep: spec.onStep };
    this.live.set(chat.id, chat);
    this.deps.store.createChat({ id: chat.id, model: entry.id, agent, parentChatId: parent.id });
    const handle = this.prompt({ chatId: chat.id, message: spec.task, model: entry.id, literal: true });
    return { model: entry.id, done: handle.done };
  }

  /** The model a chat's turns use now (a subagent takes its parent's unless told otherwise). */
  modelOf(chatId: string): string | undefined {
    return this.live.get(chatId)?.model;
  }

  /** A chat of that id is running or stored (a new subagent's id must be free). */
  hasChat(chatId: string): boolean {
    return this.live.has(chatId) || this.deps.store.getChat(chatId) !== undefined;
  }

  isSubagent(chatId: string): boolean {
    return this.parentOf(chatId) !== undefined;
  }

  /** The chat whose `spawn_agent` call runs this one, for a subagent's chat. */
  parentOf(chatId: string): string | undefined {
    return this.live.get(chatId)?.parentId;
  }

  /**
   * `chat/promptSteer` (ECA chat.clj `prompt-steer`): a message for the running turn, read at its
   * next model step. Ignored when the chat runs no turn (idle, or stopping) or the message is
   * blank: the client keeps what was not read and sends it as a prompt when the turn ends.
   */
  steer(chatId: string, message: string): void {
    const chat = this.live.get(chatId);
    if (!chat?.turn || chat.status !== 'running' || !message.trim()) return log.debug(`steer ignored: no running turn in chat ${chatId}, or nothing to say`);
    chat.steer = chat.steer === undefined ? message : `${chat.steer}\n${message}`;
  }

  /** `chat/promptSteerRemove` (ECA chat.clj `prompt-steer-remove`): the steer not yet read is dropped; else nothing. */
  removeSteer(chatId: string): void {
    const chat = this.live.get(chatId);
    if (chat) chat.steer = undefined;
  }

  /** Chats open in this server (in memory), newest activity first: gateway `sessions.active`. */
  active(): Array<{ id: string; title?: string }> {
    return [...this.live.values()].filter((c) => !this.disposed).map((c) => ({ id: c.id, ...(c.title ? { title: c.title } : {}) }));
  }

  /** An event a peer wants the user to see in the chat (kept in the chat's history). */
  surface(chatId: string, text: string): void {
    const chat = this.live.get(chatId);
    if (!chat) return;
    const m = { role: 'system' as const, kind: 'notice' as const, text };
    chat.stored.push(m);
    this.deps.store.appendMessage(chatId, m);
    this.deps.events.event(chatId, { type: 'notice', text });
  }

  /**
   * An event for the LLM: a user-role message at the next turn boundary of a running turn; in an
   * idle chat it starts a turn when `startTurn`, else it waits for the next prompt. A burst into an
   * idle chat is gathered first (until INJECT_QUIET_MS pass without another, at most
   * INJECT_GATHER_MAX_MS) and later ones steer the turn it starts: 100 pushes make one turn, not 100.
   */
  inject(chatId: string, text: string, startTurn: boolean): void {
    const chat = this.live.get(chatId);
    if (!chat || this.disposed) return;
    chat.injected.push(text);
    if (chat.turn || !startTurn || this.injectQueued.has(chat.id)) return;
    const gathering = this.gathering.get(chat.id);
    if (gathering) return void gathering.quiet.refresh();
    const start = () => this.startInjected(chat);
    this.gathering.set(chat.id, { quiet: setTimeout(start, INJECT_QUIET_MS).unref(), max: setTimeout(start, INJECT_GATHER_MAX_MS).unref() });
  }

  private startInjected(chat: LiveChat): void {
    const g = this.gathering.get(chat.id);
    if (!g) return;
    clearTimeout(g.quiet);
    clearTimeout(g.max);
    this.gathering.delete(chat.id);
    // A turn began meanwhile (it reads the injected events), or the chat was cleared or deleted.
    if (this.disposed || chat.turn || !this.live.has(chat.id) || !chat.injected.length) return;
    this.injectQueued.add(chat.id);
    this.prompt({ chatId: chat.id, message: chat.injected.splice(0).join('\n\n') });
    // Held until the chat's queue drains: the turn that picks up leftover injected events counts too.
    const release = (q: Promise<void>): void => void q.then(() => (chat.queue === q ? this.injectQueued.delete(chat.id) : release(chat.queue)));
    release(chat.queue);
  }

  /** A background job of the chat ended: the model reads `text` at its next model step (see `LiveChat.jobNotices`). */
  notifyJob(chatId: string, text: string): void {
    const chat = this.live.get(chatId);
    if (chat && !this.disposed) chat.jobNotices.push(text);
  }

  /** `chat/clear`: forget the messages of a chat (the chat itself stays). */
  clear(chatId: string): void {
    const chat = this.load(chatId);
    if (!chat) return;
    chat.generation++;
    chat.injected.splice(0);
    chat.steer = undefined;
    chat.turn?.abort.abort();
    chat.approvals.settleAll();
    chat.stored.length = 0;
    // What the cleared messages made due (compaction, pruning) and the prompt they were sent with go too.
    resetWindow(chat);
    unpin(chat);
    chat.usage = { inputTokens: 0, outputTokens: 0, cost: 0 };
    this.deps.store.clearMessages(chatId);
    this.deps.events.cleared(chatId);
  }

  selectAgent(chatId: string | undefined, agent: Agent | undefined): void {
    if (!agent) return log.info('unknown agent selected; keeping the current one');
    const chat = chatId ? this.load(chatId) : undefined;
    if (chat) {
      chat.agent = agent;
      this.deps.store.updateChat(chat.id, { agent });
    } else this.selectedAgent = agent;
  }

  /**
   * Renames a chat and/or sets its trust mode. A title given by the user is kept: no title is
   * generated over it. Unknown chats are left alone (as ECA does).
   */
  update(chatId: string, patch: { title?: string; trust?: boolean }): void {
    const chat = this.load(chatId);
    if (!chat) return log.warn(`update: no chat ${chatId}`);
    if (patch.trust !== undefined) this.setTrust(chat, patch.trust);
    const title = patch.title?.replace(/\s+/g, ' ').trim().slice(0, 200);
    if (title) {
      chat.title = title;
      this.deps.store.updateChat(chat.id, { title });
      this.deps.events.event(chat.id, { type: 'title', title });
    }
  }

  private setTrust(chat: LiveChat, trust: boolean): void {
    if (chat.trust === trust) return;
    chat.trust = trust;
    this.deps.store.updateChat(chat.id, { trust });
  }

  /**
   * The editor picked `model` (and shows `variant`) for a chat, or for new chats. Answers what
   * to show, as ECA's `chat-selected-model-changed` (handlers.clj): for a chat, the given variant
   * when the model has it, else the chat's own when it has that, else none; for new chats, the
   * given one when the model has it.
   */
  selectModel(chatId: string | undefined, model: string, variant?: string | null): VariantSelection {
    const chat = chatId ? this.load(chatId) : undefined;
    const entry = this.deps.models().find((m) => m.id === model);
    const variants = variantNames(entry);
    if (!chat) {
      this.selectedModel = model;
      return { variants, variant: validVariant(entry, variant) };
    }
    const selected = validVariant(entry, variant) ?? validVariant(entry, chat.variant);
    chat.model = model;
    // Kept as given even when this model lacks it (as ECA): back on a model that has it, it is selected again.
    // null: none (an ACP client picked "none").
    if (variant !== undefined) chat.variant = variant ?? undefined;
    this.deps.store.updateChat(chat.id, { model, variant: chat.variant ?? null });
    return { chatId: chat.id, variants, variant: selected };
  }

  list(opts: { limit?: number; sortBy?: 'updatedAt' | 'createdAt'; folder?: string; withEmpty?: boolean }): ChatSummary[] {
    return this.deps.store.listChats(opts).map((r) => ({
      id: r.id,
      ...(r.title ? { title: r.title } : {}),
      status: this.live.get(r.id)?.status ?? 'idle',
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
      ...(r.model ? { model: r.model } : {}),
      messageCount: r.messageCount,
      ...(r.folder ? { folder: r.folder } : {}),
      ...(r.kind ? { kind: r.kind } : {}),
      ...(r.additionalFolders?.length ? { additionalFolders: r.additionalFolders } : {}),
    }));
  }

  /**
   * Records where a stored chat is worked on (an ACP `session/load`): `folder` only when none was
   * recorded (a chat from before folders were), `additionalFolders` replacing the list when given.
   */
  recordFolders(chatId: string, f: { folder?: string; additionalFolders?: string[] }): void {
    this.deps.store.recordFolders?.(chatId, f);
  }

  /**
   * Resume a stored chat: clear, announce and replay it, then its title, all before this returns,
   * so a façade can answer after the replay (editors look for the chat's view once answered).
   * Undefined for an unknown chat or a subagent's. `model` only when that model is still configured.
   */
  open(chatId: string, window?: HistoryWindow): OpenedChat | undefined {
    const chat = this.load(chatId);
    // A subagent's chat is shown inside its parent's, never opened on its own (ECA `chat/open`).
    if (!chat || chat.parentId !== undefined) return undefined;
    // A window replays only its page (ECA `open-chat!`); a stale cursor replays nothing.
    const page = window && historyPage(this.deps.store.messageRows(chatId), window);
    const entry = chat.model ? this.deps.models().find((m) => m.id === chat.model) : undefined;
    const variants = { variants: variantNames(entry), variant: validVariant(entry, chat.variant) };
    if (page && !page.ok) return { id: chat.id, agent: chat.agent, trust: chat.trust, ...variants, page };
    const events = this.deps.events;
    const replay = (): void => {
      events.cleared(chat.id);
      events.opened(chat.id, chat.title);
      for (const x of this.withSubagents(chat.id, page ? page.events : replayEvents(chat.stored))) events.event(x.chatId, x.event, x.parentChatId);
      events.event(chat.id, { type: 'title', ...(chat.title ? { title: chat.title } : {}) });
    };
    if (events.together) events.together(replay);
    else replay();
    const model = entry?.id;
    return { id: chat.id, agent: chat.agent, trust: chat.trust, ...variants, ...(chat.title ? { title: chat.title } : {}), ...(model ? { model } : {}), ...(page ? { page } : {}) };
  }

  /** A replay of `chatId` with its subagents' contents inside (subagents/replay.ts). */
  withSubagents(chatId: string, events: ChatEvent[]): ReplayItem[] {
    return withSubagents(chatId, events, (childId) => {
      const live = this.live.get(childId);
      if (live) return live.parentId === chatId ? live.stored : undefined;
      return this.deps.store.getChat(childId)?.parentChatId === chatId ? this.deps.store.messages(childId) : undefined;
    });
  }

  /** `chat/history`: a window of a stored chat (./chat-history.ts). */
  history(chatId: string, w: HistoryWindow): HistoryPage {
    if (!this.load(chatId)) return { ok: false, code: 'chat_not_found', message: `Chat ${chatId} not found` };
    return historyPage(this.deps.store.messageRows(chatId), w);
  }

  /**
   * `chat/fork` (ECA chat.clj `fork-chat`): a new chat with the messages up to and including the
   * one `contentId` names, its model, agent and a "(2)" title; announced, replayed and titled,
   * then the original chat is told. Refused while a turn runs: its messages are still coming.
   */
  /** A fork keeping the messages up to `contentId`; without one, the whole chat. */
  fork(chatId: string, contentId?: string): { ok: true; chatId: string; title: string } | { ok: false; message: string } {
    const chat = this.load(chatId);
    if (!chat) return { ok: false, message: `Chat ${chatId} not found` };
    if (chat.busy()) return { ok: false, message: `Chat ${chatId} is answering a prompt: stop it or let it finish before forking` };
    const rows = this.deps.store.messageRows(chatId);
    if (contentId === undefined && !rows.length) return { ok: false, message: `Chat ${chatId} has no messages to fork` };
    const idx = contentId === undefined ? rows.length - 1 : findContentIndex(rows, contentId);
    if (idx === undefined) return { ok: false, message: `Chat ${chatId} has no message with content id ${contentId}` };
    const id = newId();
    const title = forkTitle(chat.title);
    try {
      // The fork belongs where the chat does, so a folder's chat list (`chat/list` `folder`) shows it.
      const { folder, additionalFolders } = this.deps.store.getChat(chatId) ?? {};
      const where = { ...(folder ? { folder } : {}), ...(additionalFolders?.length ? { additionalFolders } : {}) };
      this.deps.store.forkChat(chatId, { id, title, model: chat.model, agent: chat.agent, ...where }, rows[idx].seq);
    } catch (e) {
      // Another server's turn in this chat (the store checks it in the fork's transaction).
      if (e instanceof ChatRunningElsewhereError) return { ok: false, message: e.message };
      throw e;
    }
    const events = this.deps.events;
    const announce = (): void => {
      events.opened(id, title);
      for (const e of replayEvents(rows.slice(0, idx + 1).map((r) => r.message))) events.event(id, e);
      events.event(id, { type: 'title', title });
      events.event(chatId, { type: 'notice', text: `Chat forked to: ${title}` });
    };
    if (events.together) events.together(announce);
    else announce();
    return { ok: true, chatId: id, title };
  }

  private hasContentId(chat: LiveChat, id: string): boolean {
    return (
      findContentIndex(
        chat.stored.map((message, seq) => ({ seq, createdAt: 0, message })),
        id,
      ) !== undefined
    );
  }

  /** `chat/addFlag`: a named bookmark after the message `contentId` names (./chat-flags.ts). */
  addFlag(chatId: string, contentId: string, text: string): FlagResult {
    const chat = this.load(chatId);
    return chat ? addFlag(chat, this.deps.store, this.deps.events, contentId, text) : { ok: false, message: `Chat ${chatId} not found` };
  }

  /** `chat/removeFlag` (./chat-flags.ts). */
  removeFlag(chatId: string, contentId: string): FlagResult {
    const chat = this.load(chatId);
    return chat ? removeFlag(chat, this.deps.store, contentId) : { ok: false, message: `Chat ${chatId} not found` };
  }

  /**
   * `chat/rollback` (./rollback.ts): back to before the message `contentId` names. Refused, with
   * nothing changed, for an unknown chat or content id, or while a turn runs.
   */
  rollback(chatId: string, contentId: string, include: RollbackInclude): RollbackResult {
    const chat = this.load(chatId);
    if (!chat) return { ok: false, message: `Chat ${chatId} not found` };
    if (chat.busy()) return { ok: false, message: `Chat ${chatId} is answering a prompt: stop it or let it finish before rolling back` };
    const rows = this.deps.store.messageRows(chatId);
    const idx = findContentIndex(rows, contentId);
    if (idx === undefined) return { ok: false, message: `Chat ${chatId} has no message with content id ${contentId}` };
    return rollbackChat(chat, this.deps, rows, idx, include);
  }

  /** Stop every turn (shutdown) and wait, boundedly, for them to unwind and persist what they have. */
  async dispose(timeoutMs = 2_000): Promise<void> {
    // Queued prompts are dropped; running turns stop and keep what they have.
    this.disposed = true;
    for (const chat of this.live.values()) {
      chat.injected.splice(0);
      chat.steer = undefined;
      chat.turn?.abort.abort();
      chat.approvals.settleAll();
    }
    const settled = Promise.allSettled([...this.live.values()].map((c) => c.queue));
    await Promise.race([settled, new Promise((r) => setTimeout(r, timeoutMs).unref())]);
  }

  private async generateTitle(chat: LiveChat, entry: ModelEntry, firstMessage: string): Promise<void> {
    if (!this.deps.config().chat.generateTitles) return;
    try {
      const title = await modelTitle(this.deps, entry, firstMessage);
      if (!title || !this.live.has(chat.id)) return;
      chat.title = title;
      this.deps.store.updateChat(chat.id, { title });
      this.deps.events.event(chat.id, { type: 'title', title });
    } catch (e) {
      log.debug(`title for ${chat.id}: ${errorMessage(e)}`);
    }
  }
}

/** An object's methods bound to it, so a wrapper can spread them and override a few. */
function bindAll<T extends object>(o: T): T {
  const out = {} as Record<string, unknown>;
  let proto: object | null = o;
  while (proto && proto !== Object.prototype) {
    for (const k of Object.getOwnPropertyNames(proto)) {
      const v = (o as Record<string, unknown>)[k];
      if (k !== 'constructor' && typeof v === 'function' && !(k in out)) out[k] = (v as (...a: unknown[]) => unknown).bind(o);
    }
    proto = Object.getPrototypeOf(proto);
  }
  return out as T;
}
