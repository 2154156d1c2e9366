/**
 * `tool/serverUpdated` in `patchbay chat`: a terminal user has no tool panel, so an MCP server
 * (or language server) that fails to start is said on stderr, once per error, with the reason.
 * Which servers a prompt waits for is the server's own progress in the chat.
 */
import { ECA } from '../protocol/eca/methods.js';
import type { ServerProcess } from './chat-client.js';

export function watchToolServers(server: ServerProcess, show: (line: string) => void): void {
  const said = new Map<string, string>();
  server.on(ECA.toolServerUpdated, (p) => {
    if (p.type === 'native') return;
    const { name, status, error } = p;
    if (status !== 'failed') {
      if (status === 'running') said.delete(name);
      return;
    }
    const why = error ?? 'no reason given';
    if (said.get(name) === why) return; // a retry failing the same way says nothing new
    said.set(name, why);
    const kind = p.type === 'mcp' ? 'MCP server' : p.type === 'lsp' ? 'Language server' : 'Tool server';
    show(`${kind} ${name} failed: ${why}`);
  });
}
