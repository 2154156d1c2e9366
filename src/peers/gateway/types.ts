/**
 * The provider gateway's surface towards the rest of patchbay (specs/tap-provider-gateway.md,
 * core profile). A gateway "session" is a patchbay chat. Provider tools become internal Tools
 * registered for one chat; pushes become event-stream entries.
 */
import type { Tool } from '../../shapes/tool.js';

export type { GatewayConfig } from './config.js';

/** What the gateway needs from patchbay; implemented by the server session. */
export interface GatewayChats {
  /** Open chats, for `sessions.active`. */
  active(): Array<{ id: string; label: string; cwd: string }>;
  /**
   * Replace the tools one provider offers in one chat (`[]` removes them). All or nothing: when a
   * tool cannot be registered (its name is taken), nothing changes and the reason is returned.
   */
  setTools(chatId: string, providerName: string, tools: Tool[]): string | undefined;
  /** A push: store it in its stream; surface / inject also reach the chat. */
  push(entry: { chatId: string; provider: string; stream: string; level: 'keep' | 'surface' | 'inject'; text: string; metadata?: Record<string, unknown> }): void;
  /** Providers of a chat changed (connected, tools updated, gone): for `tool/serverUpdated`. */
  providersChanged(chatId: string, providers: Array<{ name: string; providerId: string; tools: Tool[] }>): void;
}

export interface GatewayHost {
  /** Starts listening; resolves with the bound address. Writes the token file. */
  start(): Promise<{ url: string; port: number }>;
  readonly token: string;
  readonly tokenFile: string;
  /** Chat lifecycle → `session.lifecycle` to the providers bound to it. */
  chatStarted(chatId: string): void;
  chatIdle(chatId: string): void;
  /** `shutdown.pending` (deadline 10 s), then close those providers. Resolves when done. */
  chatEnded(chatId: string): Promise<void>;
  /** Connected providers, for doctor. */
  providers(): Array<{ name: string; providerId: string; chatId: string; tools: number }>;
  /** `shutdown.pending` to every bound provider, then close all and remove the token file. */
  stop(): Promise<void>;
}
