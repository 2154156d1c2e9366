/**
 * The provider gateway as the runtime sees it: tool providers over WebSocket bind to a chat, offer
 * it tools, and push events into it. Every event stays in its stream; what reaches the chat and the
 * model has a budget per provider and chat, so a flooding provider cannot bury either.
 */
import { join } from 'node:path';
import { runningGateways } from '../../protocol/gateway/index.js';
import type { Peer, PeerConfig, PeerHost } from '../../shapes/peer.js';
import { LogBudget } from '../../util/log-budget.js';
import { errorMessage } from '../../util/log.js';
import { toolSpecs } from '../../shapes/tool-names.js';
import type { gatewayConfig } from './settings.js';
import { SharedGateway } from './shared.js';
import type { GatewayChats } from './types.js';

type Config = PeerConfig<typeof gatewayConfig>;

export function createGatewayPeer(host: PeerHost<Config>): Peer {
  const config = host.config().gateway;
  if (!config.enabled) return { dispose: async () => {}, doctor: async () => ({ lines: ['Provider gateway: disabled'] }) };
  /** Provider names per chat, to report the ones that went away. */
  const providerNames = new Map<string, Set<string>>();
  /** Per chat and provider: how many pushed events may reach the chat and the model. */
  const budgets = new Map<string, { surface: LogBudget; inject: LogBudget }>();
  let url: string | undefined;

  const pushBudgets = (chatId: string, provider: string): { surface: LogBudget; inject: LogBudget } => {
    const key = `${chatId}\u0000${provider}`;
    let b = budgets.get(key);
    if (!b) {
      const notice = (line: string) => host.chats.surface(chatId, line);
      const source = `provider "${provider}"`;
      b = {
        surface: new LogBudget(source, (_level, line) => notice(line), { perSecond: 10, burst: 50, maxLineChars: 4000, unit: 'events', note: 'all are kept in their streams' }),
        inject: new LogBudget(source, (level, line) => (level === 'warn' ? notice(line) : host.chats.inject(chatId, line, host.config().gateway.injectStartsTurn)), {
          perSecond: 20,
          burst: 200,
          maxLineChars: 16_000,
          unit: 'events for the model',
          note: 'the model can read them with patchbay__read_event_stream',
        }),
      };
      budgets.set(key, b);
    }
    return b;
  };

  const chats: GatewayChats = {
    active: () => host.chats.active().map((c) => ({ id: c.id, label: c.title ?? 'New chat', cwd: host.roots()[0] })),
    setTools: (chatId, provider, tools) => host.chats.setTools(chatId, `provider:${provider}`, tools),
    push: (e) => {
      host.events.queueEvent({ stream: e.stream, source: e.provider, chatId: e.chatId, level: e.level, text: e.text, metadata: e.metadata });
      if (e.level === 'keep') return;
      const b = pushBudgets(e.chatId, e.provider);
      b.surface.log('info', () => `[${e.stream}] ${e.provider}: ${e.text}`);
      if (e.level === 'inject') b.inject.log('info', () => `Event from tool provider "${e.provider}" (stream "${e.stream}"):\n${e.text}`);
    },
    providersChanged: (chatId, providers) => {
      const before = providerNames.get(chatId) ?? new Set<string>();
      const now = new Set(providers.map((p) => p.name));
      providerNames.set(chatId, now);
      for (const gone of before) {
        if (now.has(gone)) continue;
        const key = `${chatId}\u0000${gone}`;
        budgets.get(key)?.surface.flush();
        budgets.get(key)?.inject.flush();
        budgets.delete(key);
      }
      for (const p of providers) {
        host.toolServer({ type: 'provider', name: p.name, status: 'running', command: url ?? 'gateway', args: [p.providerId, chatId], tools: toolSpecs(p.tools) });
      }
      for (const name of before) {
        if (!now.has(name)) host.toolServer({ type: 'provider', name, status: 'stopped', command: url ?? 'gateway', args: [chatId], tools: [] });
      }
    },
  };

  // One gateway per process (./shared.ts): a second workspace joins the first one's listener.
  const make = () => new SharedGateway({ config, home: host.home });
  const lease = host.share?.('gateway', make);
  const shared = lease?.value ?? make();
  const gateway = shared.gateway;
  const member = shared.join({ chats, roots: () => host.roots(), reservedNames: () => host.reservedServerNames() });
  // Published to every process patchbay starts (shell commands, hooks; MCP servers get the address
  // only): they may be providers. In the host's environment, never process.env.
  host.setEnv?.({ PATCHBAY_PROVIDER_TOKEN: gateway.token, TAP_PROVIDER_TOKEN: gateway.token });
  let left = false;
  const leave = async (): Promise<void> => {
    if (left) return;
    left = true;
    await member.leave();
    // The last workspace's release stops it; one with no host to share with stops its own.
    if (lease) await lease.release();
    else await shared.dispose();
  };

  return {
    /** Listens (on a free port when the configured one is taken); a failure is reported and the rest of patchbay goes on. */
    async start() {
      try {
        ({ url } = await shared.start());
      } catch (e) {
        host.log.error(`provider gateway could not start: ${errorMessage(e)}`);
        throw new Error(`The provider gateway could not start: ${errorMessage(e)}. Set "gateway": {"port": …} (0 picks a free port) or "enabled": false.`);
      }
      host.setEnv?.({ PATCHBAY_GATEWAY_URL: url });
      host.log.info(`provider gateway listening on ${url}`);
    },
    chatStarted: (id) => gateway.chatStarted(id),
    chatIdle: (id) => gateway.chatIdle(id),
    chatEnded: (id) => void gateway.chatEnded(id),
    rootsChanged: () => gateway.rootsChanged(),
    async dispose() {
      await leave().catch((e: unknown) => host.log.error(`stopping the gateway: ${errorMessage(e)}`));
    },
    // Its run file goes when no other workspace of this process still serves through it.
    forceClose: () => {
      if (!lease || shared.size <= 1) gateway.forceClose();
    },
    async doctor() {
      if (!url) {
        // `patchbay doctor` does not listen itself: it shows the gateways running for this home.
        const running = runningGateways(join(host.home, 'gateway'));
        if (!running.length) return { lines: ['Provider gateway: not listening (no patchbay is running for this home)'] };
        const list = running.map((g) => `  - ${g.url} (pid ${g.pid}${g.roots.length ? `, ${g.roots.join(', ')}` : ''})`);
        return { lines: [`Provider gateway: not listening here; running for this home (newest first):\n${list.join('\n')}`] };
      }
      const providers = gateway.providers();
      const list = providers.map((p) => `  - ${p.name} (${p.providerId}) in chat ${p.chatId}: ${p.tools} tools`);
      return { lines: [`Provider gateway: ${url}${list.length ? `\n${list.join('\n')}` : ', no providers connected'}`] };
    },
  };
}
