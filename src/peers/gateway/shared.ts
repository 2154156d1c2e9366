/**
 * One provider gateway for every workspace of a process (shapes/shared.ts): one listener, one
 * token, one run file, however many workspaces are open. Each workspace's gateway peer joins it
 * with its own chats; a provider binding to a chat is routed to the workspace that has that chat
 * (chat ids are unique in the store the workspaces share). The run file lists every member's
 * folders. It stops when the last member leaves.
 */
import { resolve } from 'node:path';
import type { SharedThing } from '../../shapes/shared.js';
import type { GatewayConfig } from './config.js';
import { GatewayHostImpl } from './host.js';
import type { GatewayChats } from './types.js';

/** What one workspace brings: its chats and its folders. */
export interface GatewayMember {
  chats: GatewayChats;
  roots: () => string[];
  reservedNames: () => Iterable<string>;
}

export class SharedGateway implements SharedThing {
  readonly gateway: GatewayHostImpl;
  private readonly members: GatewayMember[] = [];
  /** The member a chat was last routed to (a provider leaving a chat that has ended is told to it). */
  private readonly owners = new Map<string, GatewayMember>();
  private started: Promise<{ url: string; port: number }> | undefined;

  constructor(opts: { config: GatewayConfig; home: string }) {
    this.gateway = new GatewayHostImpl({
      config: opts.config,
      home: opts.home,
      chats: this.routedChats(),
      roots: () => [...new Set(this.members.flatMap((m) => m.roots().map((r) => resolve(r))))],
      reservedNames: () => this.members.flatMap((m) => [...m.reservedNames()]),
    });
  }

  get token(): string {
    return this.gateway.token;
  }

  /** A workspace joins; `leave` ends its chats' bindings (its providers are closed). */
  join(member: GatewayMember): { leave: () => Promise<void> } {
    this.members.push(member);
    if (this.started) this.gateway.rootsChanged();
    return {
      leave: async () => {
        const i = this.members.indexOf(member);
        if (i < 0) return;
        this.members.splice(i, 1);
        const chats = [...this.owners].flatMap(([id, m]) => (m === member ? [id] : []));
        for (const id of chats) this.owners.delete(id);
        // The last member's chats end with the gateway's stop; others' providers go now.
        if (this.members.length) {
          await Promise.all(chats.map((id) => this.gateway.chatEnded(id)));
          this.gateway.rootsChanged();
        }
      },
    };
  }

  /** Listens once, for every member; a failed start may be tried again by the next member. */
  start(): Promise<{ url: string; port: number }> {
    if (!this.started) {
      const started = this.gateway.start();
      this.started = started;
      started.catch(() => {
        if (this.started === started) this.started = undefined;
      });
    }
    return this.started;
  }

  /** How many workspaces use it now. */
  get size(): number {
    return this.members.length;
  }

  dispose(): Promise<void> {
    this.started = undefined;
    return this.gateway.stop();
  }

  forceClose(): void {
    this.gateway.forceClose();
  }

  /** The member whose workspace has this chat open (one member: always it). */
  private ownerOf(chatId: string): GatewayMember | undefined {
    if (this.members.length <= 1) return this.members[0];
    const open = this.members.find((m) => m.chats.active().some((c) => c.id === chatId));
    if (open) this.owners.set(chatId, open);
    return open ?? this.owners.get(chatId) ?? this.members[0];
  }

  private routedChats(): GatewayChats {
    return {
      active: () => this.members.flatMap((m) => m.chats.active()),
      setTools: (chatId, provider, tools) => {
        const m = this.ownerOf(chatId);
        if (!m) return `chat ${chatId} is not open`;
        if (this.members.length <= 1) this.owners.set(chatId, m);
        return m.chats.setTools(chatId, provider, tools);
      },
      push: (e) => this.ownerOf(e.chatId)?.chats.push(e),
      providersChanged: (chatId, providers) => this.ownerOf(chatId)?.chats.providersChanged(chatId, providers),
    };
  }
}
