/**
 * MCP servers one chat brings with it (ACP `session/new` / `session/load` `mcpServers`): each chat's
 * set runs in its own MCP host (peers/mcp/host.ts), so they get exactly what configured servers get
 * (timeouts, restarts with backoff, tool adaptation, `<server>__<tool>` names, status reports,
 * process trees stopped), but their tools go to that chat only and nothing is written to any
 * config file: the set lives as long as the session, or until the front end replaces it.
 *
 * Trust: these come from the editor, i.e. the user's own client settings, not from the repository
 * being opened, so they start in untrusted folders too (the trust rule of config/trust.ts guards
 * against a repository's `.patchbay/config.json` starting code; no repository can name these).
 *
 * Names: a server named like one already taken (a configured MCP server, another peer's server, an
 * earlier one of the same set) is renamed `<name>-session` (then `-session-2`, …), so its tools
 * never shadow nor are shadowed by the configured server's, and approval rules written for the
 * configured server do not cover it. Characters tool names cannot carry become `-`.
 */
import type { AskUser } from '../shapes/ask.js';
import type { ChatMcpServer } from '../shapes/chat-servers.js';
import type { ToolServerStatus } from '../shapes/peer.js';
import type { Tool } from '../shapes/tool.js';
import type { ToolRefusal } from '../shapes/registry.js';
import { serverNameProblem } from '../shapes/tool-names.js';
import { McpHostImpl } from '../peers/mcp/host.js';
import { toStatus } from '../peers/mcp/peer.js';
import { waitForMcpStarts, type StartWaitReport } from '../peers/mcp/start-wait.js';
import { errorMessage, logger, type LogLevel } from '../util/log.js';

const log = logger('chat-servers');

export interface ChatServersDeps {
  /** The registry's per-chat side (ToolRegistry.setForChat). */
  setForChat(chatId: string, source: string, tools: Tool[]): ToolRefusal[];
  env: NodeJS.ProcessEnv;
  roots(): string[];
  /** `mcpTimeoutSeconds` and `mcpStartWaitSeconds` of the config now. */
  timeoutSeconds(): number;
  startWaitSeconds(): number;
  logLevel(): LogLevel;
  /** Server names already in use outside these sets (configured MCP servers, other peers' servers). */
  reservedNames(): string[];
  ask?: AskUser;
  status(status: ToolServerStatus): void;
  removed?(name: string): void;
}

export class ChatServers {
  private readonly hosts = new Map<string, McpHostImpl>();
  /** One change per chat at a time: a replace must not interleave with the remove before it. */
  private readonly changing = new Map<string, Promise<void>>();
  private disposed = false;

  constructor(private readonly deps: ChatServersDeps) {}

  /**
   * Starts `servers` for `chatId`, replacing the set it had: servers not named again stop, changed
   * ones restart, unchanged ones keep running. Resolves once the stops are done and the starts have
   * begun; a server that fails is reported (status `failed`), never thrown.
   */
  add(chatId: string, servers: ChatMcpServer[]): Promise<void> {
    return this.serial(chatId, async () => {
      if (this.disposed) return log.warn(`chat ${chatId}: the workspace is shut down; its MCP servers are not started`);
      const entries = configEntries(servers, this.deps.reservedNames());
      log.info(`chat ${chatId}: MCP servers ${Object.keys(entries).join(', ') || '(none)'}`);
      const host = this.hosts.get(chatId);
      if (host) {
        host.reconcile(entries);
        return host.reconciled();
      }
      if (!Object.keys(entries).length) return;
      const created = this.newHost(chatId, entries);
      this.hosts.set(chatId, created);
      created.startAll();
    });
  }

  /** Stops the chat's servers (each reported stopped, then removed). */
  remove(chatId: string): Promise<void> {
    return this.serial(chatId, async () => {
      const host = this.hosts.get(chatId);
      if (!host) return;
      this.hosts.delete(chatId);
      host.reconcile({});
      await host.reconciled();
      await host.dispose();
    });
  }

  /** Before a turn of this chat: waits (bounded) for its servers still in their first start, as for configured ones. */
  async ready(chatId: string, signal: AbortSignal, report: StartWaitReport): Promise<void> {
    await this.changing.get(chatId);
    const host = this.hosts.get(chatId);
    if (host) await waitForMcpStarts(host, report, signal, this.deps.startWaitSeconds());
  }

  /** The workspace folders changed: every chat's running servers are told (`notifications/roots/list_changed`). */
  async setRoots(roots: string[]): Promise<void> {
    await Promise.all([...this.hosts.values()].map((h) => h.setRoots(roots)));
  }

  /** A running stdio server's pid (diagnostics and tests); `name` as the chat's servers are named. */
  pid(chatId: string, name: string): number | undefined {
    return this.hosts.get(chatId)?.pid(name);
  }

  /** The chat's servers as front ends show them. */
  servers(chatId: string): ToolServerStatus[] {
    return (this.hosts.get(chatId)?.servers() ?? []).map(toStatus);
  }

  /** At once: SIGKILL to every chat's stdio servers (the workspace's shutdown ran past its deadline). */
  forceClose(): void {
    this.disposed = true;
    for (const h of this.hosts.values()) h.forceClose();
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    const hosts = [...this.hosts.values()];
    this.hosts.clear();
    await Promise.all(hosts.map((h) => h.dispose().catch((e: unknown) => log.warn(errorMessage(e)))));
  }

  private newHost(chatId: string, servers: Record<string, unknown>): McpHostImpl {
    const d = this.deps;
    return new McpHostImpl({
      servers,
      timeoutSeconds: d.timeoutSeconds(),
      logLevel: d.logLevel(),
      roots: d.roots(),
      env: d.env,
      tools: { set: (source, tools) => d.setForChat(chatId, source, tools) },
      // MCP prompts become /commands of the whole workspace, which has no per-chat commands: not offered.
      commands: { set: () => {} },
      ...(d.ask ? { ask: d.ask } : {}),
      // No `secrets`: no OAuth sign-in; a remote server's credentials come in its headers.
      events: {
        serverUpdated: (info) => {
          if (info.status === 'failed') log.warn(`chat ${chatId}: MCP server ${info.name} failed${info.lastError ? `: ${info.lastError}` : ''}`);
          d.status(toStatus(info));
        },
        serverRemoved: (name) => d.removed?.(name),
      },
    });
  }

  private serial(chatId: string, work: () => Promise<void>): Promise<void> {
    const next = (this.changing.get(chatId) ?? Promise.resolve()).then(work, work);
    const settled = next.catch(() => {});
    this.changing.set(chatId, settled);
    void settled.then(() => {
      if (this.changing.get(chatId) === settled) this.changing.delete(chatId);
    });
    return next;
  }
}

/** The set as `mcpServers` entries (config/mcp shapes), under the names the rule above gives. */
export function configEntries(servers: ChatMcpServer[], reserved: readonly string[]): Record<string, unknown> {
  const taken = new Set(reserved);
  const out: Record<string, unknown> = {};
  for (const s of servers) {
    const name = freeName(s.name, taken);
    taken.add(name);
    out[name] = s.transport === 'stdio' ? { command: s.command, args: s.args, env: s.env } : { type: s.transport, url: s.url, headers: s.headers };
  }
  return out;
}

function freeName(raw: string, taken: ReadonlySet<string>): string {
  let base = raw.replace(/[^A-Za-z0-9_-]+/g, '-').replace(/_{2,}/g, '_') || 'server';
  // `eca…` and `patchbay…` belong to patchbay's own tools.
  if (serverNameProblem(base)) base = `mcp-${base}`;
  if (!taken.has(base)) return base;
  for (let n = 1; ; n++) {
    const name = n === 1 ? `${base}-session` : `${base}-session-${n}`;
    if (!taken.has(name)) return name;
  }
}
