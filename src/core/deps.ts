/** Everything the chat core needs from the rest of the server, passed in (core imports no peer or store). */
import type { SandboxPlan } from '../util/sandbox.js';
import type { Config } from '../config/schema.js';
import type { LlmClient, ModelEntry } from '../shapes/llm.js';
import type { Context as ChatContext } from '../shapes/context.js';
import type { ChatEvents } from './events.js';
import type { ChatPersistence } from './persistence.js';
import type { EditorBridge, Tool } from '../shapes/tool.js';
import type { ToolRegistry } from './tool-calls/tool-registry.js';
import type { PromptScope, PromptSection } from './turn/prompt-sections.js';
import type { LlmEvent, LlmRequest } from '../shapes/llm.js';
import type { Hooks } from './hooks/hooks.js';

export interface ChatDeps {
  store: ChatPersistence;
  events: ChatEvents;
  tools: ToolRegistry;
  editor: EditorBridge;
  config(): Config;
  /** The workspace's folders, read anew each time; in a turn's deps, the chat's (./chat/chat-roots.ts). */
  roots(): string[];
  /** The home folder `~` means in config paths (`toolCall.approval.insideWorkspace`); unset: the process's. */
  homeDir?: string;
  models(): ModelEntry[];
  defaultModel(): ModelEntry | undefined;
  /** `signal`: the turn or request waiting (a stop ends the wait for a login refresh). */
  clientFor(entry: ModelEntry, signal?: AbortSignal): Promise<LlmClient>;
  /** streamWithRetry from the LLM layer: retries, stall detection, abort. */
  stream(client: LlmClient, req: LlmRequest, opts: { maxRetries: number; stallMs: number; onRetry: (attempt: number, delayMs: number, err: Error) => void }): AsyncIterable<LlmEvent>;
  cost(entry: ModelEntry, usage: { inputTokens: number; outputTokens: number; cacheReadTokens?: number; cacheWriteTokens?: number }): number | undefined;
  /** `roots`: the folders of the chat the contexts are for (relative paths, the repo map); unset: the workspace's. */
  renderContexts(contexts: ChatContext[], signal: AbortSignal, roots?: string[]): Promise<{ text: string; errors: string[] }>;
  /**
   * Before a turn: waits (bounded, abortable) for tool peers still starting up, telling the chat
   * which it waits for and which failed, so the turn's tool list has their tools.
   */
  toolsReady?(chatId: string, signal: AbortSignal): Promise<void>;
  /** The system prompt's sections from every source (project instructions, rules, skills, MCP servers' instructions…). */
  promptSections(scope: PromptScope): PromptSection[];
  /** The held-back messages of untrusted files whose provider settings would give a model (config/held-model.ts). */
  heldModels?(): string[];
  /** Bad agent-runtime files (rules, skills, commands, agents, hooks): each is told to a chat once (agent-files/runtime-board.ts). */
  problems?(): string[];
  /** Context peers add for a user message (e.g. OpenCtx auto-include providers); '' for none. */
  messageContext?(message: string, signal: AbortSignal): Promise<string>;
  /** Durable memory's index for a user turn of this chat ('' for none); runtime/memory.ts. */
  memoryIndex?(chatId: string): string;
  /** Folders a call of this tool may treat as inside the workspace (memory's, runtime/memory.ts). */
  trustedFolders?(tool: Pick<Tool, 'name' | 'server'>): string[];
  /** How the commands of a chat with these folders run: in the OS sandbox, or why not (runtime/sandbox.ts). */
  sandbox?(roots: readonly string[]): Promise<SandboxPlan>;
  /** Told when a chat starts, goes idle after a turn, and ends (deleted); e.g. for gateway providers. */
  lifecycle?: { created(chatId: string): void; idle(chatId: string): void; ended(chatId: string): void };
  /** Of the contexts a chat referenced earlier, those whose content changed since it was last read. */
  updatedContexts(refs: ChatContext[]): ChatContext[];
  /** The configured hooks (core/hooks/); unset: none run. */
  hooks?: Hooks;
  /** How long a stopped turn waits for a tool that ignores its abort signal (default STOP_GRACE_MS). */
  stopGraceMs?: number;
  /**
   * What the front end can do. A front end that cannot ask the user has every call that would ask
   * refused (as the config's deny would); one that shows no diffs is not sent them before approval.
   * Unset: it can do both (ECA editors).
   */
  frontEnd?: { canAsk: boolean; canShowDiffs: boolean };
}
