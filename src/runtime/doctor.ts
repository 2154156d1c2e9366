/** The report behind `/doctor` and `patchbay doctor`. */
import type { ModelEntry } from '../shapes/llm.js';
import type { Tool } from '../shapes/tool.js';
import type { McpServerInfo } from '../peers/mcp/types.js';
import type { ProviderHealth } from '../peers/openctx/client/index.js';

export interface DoctorInput {
  home: string;
  dbPath: string;
  roots: string[];
  configSources: string[];
  configErrors: string[];
  /** Held-back workspace settings (src/config/held-back.ts), one message per file. */
  heldBack?: string[];
  models: ModelEntry[];
  defaultModel: ModelEntry | undefined;
  tools: Tool[];
  mcpServers: McpServerInfo[];
  languageServers: Array<{ name: string; status: string; roots: string[]; restarts: number; lastError?: string; needs?: string; note?: string }>;
  /** Each provider's `meta`, asked for the report (bounded by `openctx.timeoutMs`). */
  openctx: { providers: ProviderHealth[]; host: string | undefined };
  gateway?: { url: string | undefined; providers: Array<{ name: string; providerId: string; chatId: string; tools: number }> };
}

export async function doctorReport(d: DoctorInput): Promise<string> {
  const byServer = new Map<string, number>();
  for (const t of d.tools) byServer.set(t.server, (byServer.get(t.server) ?? 0) + 1);
  const lines = [
    `patchbay ${process.env.npm_package_version ?? ''}`.trim() + ` on Node ${process.version} (${process.platform}/${process.arch})`,
    `Home: ${d.home}`,
    `Store: ${d.dbPath}`,
    `Workspace: ${d.roots.join(', ')}`,
    `Config sources: ${d.configSources.length ? d.configSources.join(' < ') : 'built-in defaults only'}`,
    d.configErrors.length ? `Config problems:\n${d.configErrors.map((e) => `  - ${e}`).join('\n')}` : 'Config problems: none',
    d.heldBack?.length ? `Workspace trust:\n${d.heldBack.map((m) => `  - ${m}`).join('\n')}` : 'Workspace trust: nothing held back',
    `Models (${d.models.length}): ${d.models.length ? d.models.map((m) => m.id).join(', ') : 'none — set OPENAI_API_KEY, ANTHROPIC_API_KEY or OLLAMA_API_URL, or configure providers'}`,
    `Default model: ${d.defaultModel?.id ?? 'none'}`,
    ...(await localModelLines(d.models, d.home)),
    `Native tools: ${byServer.get('patchbay') ?? 0}`,
    d.mcpServers.length
      ? `MCP servers:\n${d.mcpServers
          .map((s) => `  - ${s.name}: ${s.status}, ${s.tools.length} tools${s.restarts ? `, ${s.restarts} restarts` : ''}${s.lastError ? ` — last error: ${s.lastError}` : ''}`)
          .join('\n')}`
      : 'MCP servers: none configured',
    d.languageServers.length
      ? `Language servers:\n${d.languageServers
          .map((s) => `  - ${s.name}: ${s.status}${s.roots.length ? ` (${s.roots.join(', ')})` : ''}${s.restarts ? `, ${s.restarts} restarts` : ''}${s.lastError ? ` — last error: ${s.lastError}` : ''}${s.needs ? `; needs ${s.needs}` : ''}${s.note ? ` — ${s.note}` : ''}`)
          .join('\n')}`
      : 'Language servers: none available',
    d.openctx.providers.length
      ? `OpenCtx providers:\n${d.openctx.providers.map(openCtxLine).join('\n')}`
      : 'OpenCtx providers: none configured',
    `OpenCtx host: ${d.openctx.host ?? 'not serving'}`,
    !d.gateway
      ? 'Provider gateway: disabled'
      : `Provider gateway: ${d.gateway.url ?? 'not listening'}${
          d.gateway.providers.length
            ? `\n${d.gateway.providers.map((p) => `  - ${p.name} (${p.providerId}) in chat ${p.chatId}: ${p.tools} tools`).join('\n')}`
            : ', no providers connected'
        }`,
  ];
  return lines.join('\n');
}

/** `name (uri): ok — capabilities`, or the error its `meta` gave (module not found, connection refused, bad meta). */
function openCtxLine(p: ProviderHealth): string {
  const label = p.name === p.provider ? p.name : `${p.name} (${p.provider})`;
  if (!p.ok) return `  - ${label}: failing — ${p.error ?? 'unknown error'}`;
  const notes = [
    p.capabilities.length ? p.capabilities.join(', ') : 'no capabilities',
    ...(p.unnamed ? [`meta has no name, so it is called "${p.name}"`] : []),
    ...(p.lastError ? [`last error: ${p.lastError}`] : []),
  ];
  return `  - ${label}: ok — ${notes.join('; ')}`;
}

/** Where each local model's file is: ready on disk, or fetched on first use. */
async function localModelLines(models: ModelEntry[], home: string): Promise<string[]> {
  const local = models.filter((m) => m.local);
  if (!local.length) return [];
  // Loaded here, not at start-up: the server only needs it for a local model's first use.
  const { modelFileState } = await import('../peers/llm/local-models.js');
  const state = (m: ModelEntry): string => {
    const f = modelFileState(m.local!.model, home);
    if (f.kind === 'ready') return `ready (${f.path})`;
    if (f.kind === 'missing') return `missing file ${f.path}`;
    if (f.kind === 'remote') return `downloaded on first use to ${f.path} (or: patchbay models pull ${m.id})`;
    return f.reason;
  };
  return ['Local models:', ...local.map((m) => `  - ${m.id}: ${m.local!.model} — ${state(m)}`)];
}
