/** The MCP peer as the runtime sees it: servers' tools, prompts (commands), resources (contexts), instructions. */
import type { Peer, PeerConfig, PeerHost, ToolServerStatus } from '../../shapes/peer.js';
import type { mcpConfig } from './settings.js';
import { McpHostImpl } from './host.js';
import { waitForMcpStarts } from './start-wait.js';
import type { McpServerInfo } from './types.js';
import { openSecretStore } from '../../util/secrets.js';

type Config = PeerConfig<typeof mcpConfig>;

export function createMcpPeer(host: PeerHost<Config>): Peer & { mcp: McpHostImpl } {
  const config = host.config();
  const mcp = new McpHostImpl({
    servers: config.mcpServers,
    timeoutSeconds: config.mcpTimeoutSeconds,
    logLevel: host.logLevel(),
    roots: host.roots(),
    env: host.env,
    tools: host.tools,
    commands: host.commands,
    ...(host.ask ? { ask: host.ask } : {}),
    ...(host.sandbox ? { sandbox: (name: string) => host.sandbox!(name) } : {}),
    secrets: openSecretStore({ env: host.env, home: host.home }),
    signInOpened: (server, url, started) =>
      host.log[started ? 'info' : 'warn'](`MCP server ${server}: ${started ? 'sign in in the browser just opened, or at' : 'no browser could be opened; sign in at'} ${url}`),
    events: {
      serverUpdated: (info) => host.toolServer(toStatus(info)),
      serverRemoved: (name) => host.toolServerRemoved?.(name),
    },
  });
  return {
    mcp,
    serversTaskBegan: () => mcp.allowStarts(),
    startServers: () => mcp.startAll(),
    async settle(signal) {
      // Until each server's first start is over (running or failed; a failed one is then restarted
      // with backoff). Not "no server is starting": one still queued by startAll is not starting yet.
      if (signal.aborted) return;
      let onAbort: (() => void) | undefined;
      await Promise.race([mcp.firstStarts(), new Promise<void>((r) => signal.addEventListener('abort', (onAbort = () => r()), { once: true }))]);
      // The signal may outlive this wait (the workspace's stop signal): leave no listener on it.
      signal.removeEventListener('abort', onAbort!);
    },
    startServer: (name) => (mcp.servers().some((s) => s.name === name) ? mcp.start(name) : undefined),
    stopServer: (name) => (mcp.servers().some((s) => s.name === name) ? mcp.stop(name) : undefined),
    // Running servers are told (`notifications/roots/list_changed`) and ask `roots/list` again.
    rootsChanged: () => mcp.setRoots(host.roots()),
    // New entries start, changed ones restart, removed ones stop (host.ts reconcile).
    reconfigure: () => {
      const { added, changed } = mcp.reconcile(host.config().mcpServers);
      return [...added, ...changed].map((name) => ['mcpServers', name]);
    },
    reconfigured: () => mcp.reconciled(),
    serverStatus: (name) => {
      const info = mcp.servers().find((s) => s.name === name);
      return info ? toStatus(info) : undefined;
    },
    forgetServer: (name) => mcp.forgetServerCredentials(name),
    connectServer: (name) => (mcp.servers().some((s) => s.name === name) ? mcp.signIn(name) : undefined),
    logoutServer: (name) => (mcp.servers().some((s) => s.name === name) ? mcp.logout(name) : undefined),
    dispose: () => mcp.dispose(),
    forceClose: () => mcp.forceClose(),
    serverNames: () => Object.keys(host.config().mcpServers),
    instructions: () => mcp.instructions(),
    toolsReady: (signal, report) => waitForMcpStarts(mcp, report, signal, host.config().mcpStartWaitSeconds),
    resources: () => mcp.resources(),
    readContext: (ctx, signal) => (mcp.servers().some((s) => s.name === ctx.server) ? mcp.readResource(ctx, signal) : undefined),
    updatedContexts: (refs) => mcp.updatedSince(refs),
    async doctor() {
      const servers = mcp.servers();
      if (!servers.length) return { lines: ['MCP servers: none configured'] };
      return {
        lines: [
          'MCP servers:',
          ...servers.map(
            (s) =>
              `  - ${s.name}: ${s.status}${s.status === 'requires-auth' ? ' (connect it from the editor to sign in)' : ''}${s.hasAuth ? ', signed in (OAuth)' : ''}, ${s.tools.length} tools${s.restarts ? `, ${s.restarts} restarts` : ''}${s.lastError ? ` — last error: ${s.lastError}` : ''}`,
          ),
        ],
      };
    },
  };
}

/** One server as front ends show it (ECA `tool/serverUpdated`). */
export function toStatus(info: McpServerInfo): ToolServerStatus {
  return {
    type: 'mcp',
    name: info.name,
    // A remote server shows its URL where a local one shows its command line (as ECA does).
    ...(info.url ? { url: info.url } : { command: info.command, args: info.args }),
    status: info.status,
    tools: info.tools,
    prompts: info.prompts,
    resources: info.resources,
    disabled: info.disabled,
    authorized: info.hasAuth,
    ...(info.lastError ? { error: info.lastError } : {}),
  };
}
