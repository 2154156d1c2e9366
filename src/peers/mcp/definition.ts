/** The mcp peer as the runtime registers it: its settings (settings.ts) and its code, loaded when a workspace is built. Listed in src/peers/index.ts. */
import { z } from 'zod';
import { remoteServerSchema, stdioServerSchema } from './config.js';
import { serverNameProblem } from '../../shapes/tool-names.js';
import { definePeer } from '../../shapes/peer.js';
import { mcpConfig } from './settings.js';

export const mcpPeer = definePeer({
  name: 'mcp',
  config: mcpConfig,
  checkedConfig: { mcpServers: z.record(z.string(), stdioServerSchema.extend(remoteServerSchema.shape)) },
  // Every entry: a command runs code; a URL receives your prompts and files.
  trustRule: ({ entries, hold, describeServer }) => {
    for (const [name, entry] of entries('mcpServers')) hold(['mcpServers', name], describeServer(entry));
  },
  // A server whose name would make tool names or approval rules ambiguous is not started (config.ts).
  checkConfig: (config) =>
    Object.keys((config.mcpServers as Record<string, unknown> | undefined) ?? {}).flatMap((name) => {
      const bad = serverNameProblem(name);
      return bad ? [{ key: `mcpServers.${name}`, message: `the server name ${bad}; the server is not started, rename it` }] : [];
    }),
  load: async () => (await import('./peer.js')).createMcpPeer,
});
