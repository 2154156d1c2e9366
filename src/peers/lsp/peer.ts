/**
 * The language-server peer as the runtime sees it: its own tools, diagnostics beside the
 * editor's, and the native file tools wrapped so a read opens the file in its server and a write
 * or edit waits (bounded) for fresh diagnostics and hands new errors to the model.
 */
import type { Peer, PeerConfig, PeerHost } from '../../shapes/peer.js';
import type { Tool } from '../../shapes/tool.js';
import { resolvePath } from '../../util/paths.js';
import type { lspConfig } from './settings.js';
import { LspHostImpl } from './host.js';
import { SqliteXCache } from './sourcegraph.js';
import { safely } from '../../util/guards.js';

type Config = PeerConfig<typeof lspConfig>;
const FILE_TOOLS = ['read_file', 'write_file', 'edit_file'];

export function createLspPeer(host: PeerHost<Config>): Peer {
  /** The status each language server was last announced with. */
  const reported = new Map<string, string>();
  const lsp: LspHostImpl = new LspHostImpl({
    servers: host.config().languageServers,
    roots: host.roots(),
    env: host.env,
    xcache: new SqliteXCache(host.db),
    // Language servers start lazily: the front end hears when one changed status.
    onStatusChange: () => {
      for (const s of lsp.servers()) {
        if (reported.get(s.name) === s.status) continue;
        reported.set(s.name, s.status);
        host.toolServer({ type: 'lsp', name: s.name, command: s.command, args: s.args, status: s.status, tools: [], ...(s.lastError ? { error: s.lastError } : {}) });
      }
    },
    trustedFolder: (root) => host.trustedFolder(root),
  });
  host.tools.set('lsp', lsp.tools());

  const wrapTool = (tool: Tool): Tool => {
    if (!FILE_TOOLS.includes(tool.name)) return tool;
    return {
      ...tool,
      call: async (args, ctx) => {
        const path = typeof args.path === 'string' ? safely(() => resolvePath(args.path as string, ctx.roots)) : undefined;
        // Touched: its language server starts now, while the tool runs, not when diagnostics are wanted.
        if (path) lsp.touch(path);
        const result = await tool.call(args, ctx);
        if (result.error || !path) return result;
        if (tool.name === 'read_file') {
          lsp.fileRead(path);
          return result;
        }
        const { note } = await lsp.afterFileChange(path, ctx.signal).catch((e: unknown) => ({ note: `Diagnostics: not available — ${(e as Error).message}` }));
        if (!note) return result;
        return { ...result, outputs: [...result.outputs, { type: 'text', text: note }] };
      },
    };
  };

  return {
    wrapTool,
    fileTouched: (path) => lsp.fileRead(path),
    rootsChanged: (change) => lsp.setRoots(host.roots(), change.removed, host.config().languageServers),
    diagnostics: (path) => lsp.diagnostics(path),
    // Language servers for the workspace's languages too: a server that cannot run says why.
    settle: (signal) => lsp.probe(signal),
    dispose: () => lsp.dispose(),
    forceClose: () => lsp.forceClose(),
    async doctor() {
      const servers = lsp.servers();
      if (!servers.length) return { lines: ['Language servers: none available'] };
      return {
        lines: [
          'Language servers:',
          ...servers.map(
            (s) =>
              `  - ${s.name}: ${s.status}${s.roots.length ? ` (${s.roots.join(', ')})` : ''}${s.restarts ? `, ${s.restarts} restarts` : ''}${s.lastError ? ` — last error: ${s.lastError}` : ''}${s.needs ? `; needs ${s.needs}` : ''}${s.note ? ` — ${s.note}` : ''}`,
          ),
        ],
      };
    },
  };
}
