/** The report behind `/doctor` and `patchbay doctor`. */
import type { ModelEntry } from '../shapes/llm.js';
import type { Tool } from '../shapes/tool.js';
import { variantNames } from '../shapes/variants.js';
import { scrubUrls } from '../util/url.js';

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
  /** How each provider is authenticated and where secrets are kept (never a value). */
  providers?: string[];
  /** Each peer's own lines, in the order of src/peers/index.ts. */
  peers: string[];
  /** Rules, skills, commands, agents and hooks: each feature's lines, then the bad files (core/agent-files/runtime-board.ts). */
  agentRuntime?: string[];
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
    ...variantLines(d.models),
    ...(await localModelLines(d.models, d.home)),
    ...(d.providers ?? []),
    `Native tools: ${byServer.get('patchbay') ?? 0}`,
    ...d.peers,
    ...(d.agentRuntime ?? []),
  ];
  return lines.join('\n');
}

/** The variants an editor offers per model (built-in and configured), so a config edit can be checked. */
function variantLines(models: ModelEntry[]): string[] {
  const lines = models.flatMap((m) => {
    const names = variantNames(m);
    return names.length ? [`  - ${m.id}: ${names.join(', ')}`] : [];
  });
  return lines.length ? ['Model variants:', ...lines] : [];
}

/** Where each local model's file is: ready on disk, or fetched on first use. */
async function localModelLines(models: ModelEntry[], home: string): Promise<string[]> {
  const local = models.filter((m) => m.local);
  if (!local.length) return [];
  // Loaded here, not at start-up: the server only needs it for a local model's first use.
  const { modelFileState } = await import('../peers/llm/local-models.js');
  const { missingLibraryMessage } = await import('../peers/llm/local-library.js');
  const missing = missingLibraryMessage();
  const state = (m: ModelEntry): string => {
    const f = modelFileState(m.local!.model, home);
    if (f.kind === 'ready') return `ready (${f.path})`;
    if (f.kind === 'missing') return `missing file ${f.path}`;
    if (f.kind === 'remote') return `downloaded on first use to ${f.path} (or: patchbay models pull ${m.id})`;
    return f.reason;
  };
  const lines = local.map((m) => `  - ${m.id}: ${scrubUrls(m.local!.model)} — ${missing ? 'unavailable (node-llama-cpp is not installed)' : state(m)}`);
  return ['Local models:', ...lines, ...(missing ? [`  ${missing}`] : [])];
}
