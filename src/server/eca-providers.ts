/**
 * `providers/list` (ECA docs/protocol.md "List Providers"; ECA's features/providers.clj
 * `build-provider-status`): every provider the config names or whose models are usable, with how
 * its key was found and its models. patchbay has no login flow, so no `login` methods are offered;
 * the key itself never leaves the server.
 */
import type { ProviderStatus } from '../protocol/eca/settings.js';
import type { ModelEntry } from '../peers/llm/index.js';
import type { ProviderConfig } from '../peers/llm/config.js';
import { maskedUrl } from '../util/url.js';

/** Providers that run on this machine: no key, "local" once they have models (ECA: else "not-running"). */
const LOCAL_APIS = new Set(['ollama', 'local']);

export function providerStatuses(configured: Record<string, ProviderConfig>, models: readonly ModelEntry[]): ProviderStatus[] {
  const ids = [...new Set([...Object.keys(configured), ...models.map((m) => m.provider)])];
  return ids.map((id) => {
    const config = configured[id];
    const own = models.filter((m) => m.provider === id);
    const api = config?.api ?? own[0]?.api;
    return {
      id,
      configured: config !== undefined,
      auth: auth(config, own, api),
      models: own.map((m) => ({
        id: m.id.slice(id.length + 1),
        // patchbay does not know a model's reasoning, vision or web search; every model gets tools.
        capabilities: { reason: false, vision: false, tools: true, webSearch: false },
        ...(m.cost ? { cost: { input: m.cost.input, output: m.cost.output } } : {}),
      })),
      ...(config ? { settings: settings(config) } : {}),
    };
  });
}

function auth(config: ProviderConfig | undefined, models: readonly ModelEntry[], api: string | undefined): ProviderStatus['auth'] {
  if (api && LOCAL_APIS.has(api)) return { status: models.length ? 'local' : 'not-running' };
  // Models are only resolved once their provider has a key: a provider with models has one.
  if (!models.some((m) => m.key)) return { status: 'unauthenticated' };
  if (config?.key) return { status: 'authenticated', type: 'api-key', source: 'config' };
  return { status: 'authenticated', type: 'api-key', source: 'env', ...(config?.keyEnv ? { envVar: config.keyEnv } : {}) };
}

/**
 * The provider's settings as ECA shows them: everything but the key and the model table, and the
 * URL without what may be a secret (`user:password@`, `?api-key=` values).
 */
function settings(config: ProviderConfig): Record<string, unknown> {
  const { key: _key, models: _models, url, ...rest } = config;
  return Object.fromEntries(Object.entries({ ...rest, ...(url !== undefined ? { url: maskedUrl(url) } : {}) }).filter(([, v]) => v !== undefined));
}
