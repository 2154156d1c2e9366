/**
 * The Providers panel (ECA docs/protocol.md "Provider Management"; ECA's features/providers.clj
 * `build-provider-status`, `provider-login`, `provider-login-input`, `provider-logout`):
 * `providers/list` (every built-in and configured provider with how it is authenticated, its
 * login methods and models), the login steps as ECA's action descriptors, and the
 * `providers/updated` status. Keys never leave the server; URLs are masked.
 */
import { ResponseError } from 'vscode-jsonrpc';
import type { ProvidersLoginResult, ProviderStatus } from '../../protocol/eca/settings.js';
import type { ProviderConfig } from '../../peers/llm/index.js';
import type { Workspace } from '../../runtime/workspace.js';
import { LoginFailedError, LoginInputError, type LoginStep } from '../../runtime/provider-logins.js';
import { InvalidParams, RequestFailed } from '../../rpc/errors.js';
import { maskedUrl } from '../../util/url.js';

/** ECA's labels for the providers patchbay also knows (features/providers.clj `provider-labels`). */
const LABELS: Record<string, string> = { anthropic: 'Anthropic', openai: 'OpenAI', ollama: 'Ollama', local: 'Local (in-process)' };

/**
 * Every provider: built in or configured, and any with a stored login (ECA lists every provider
 * with stored auth, so it can be logged out of); the built-in `local` only while it has a model.
 */
export function providerStatuses(s: Workspace): ProviderStatus[] {
  const all = [...new Set([...s.providerIds(), ...s.logins.storedIds()])];
  const ids = all.filter((id) => id !== 'local' || s.config.providers.local || s.models.some((m) => m.provider === 'local'));
  return ids.map((id) => providerStatus(s, id));
}

export function providerStatus(s: Workspace, id: string): ProviderStatus {
  const config = s.config.providers[id];
  const methods = s.logins.methods(id);
  return {
    id,
    ...(LABELS[id] ? { label: LABELS[id] } : {}),
    configured: config !== undefined,
    auth: s.providerAuth(id),
    ...(methods.length ? { login: { methods } } : {}),
    models: s.models
      .filter((m) => m.provider === id)
      .map((m) => ({
        id: m.id.slice(id.length + 1),
        // patchbay does not know a model's reasoning, vision or web search; every model gets tools.
        capabilities: { reason: false, vision: m.imageInput === true, tools: true, webSearch: false },
        ...(m.cost ? { cost: { input: m.cost.input, output: m.cost.output } } : {}),
      })),
    ...(config ? { settings: settings(config) } : {}),
  };
}

/** A login step as ECA's action descriptor. */
export function toEcaLoginAction(step: LoginStep): ProvidersLoginResult {
  switch (step.kind) {
    case 'choose':
      return { action: 'choose-method', methods: step.methods };
    case 'authorize':
      return { action: 'authorize', url: step.url, message: step.message, ...(step.fields ? { fields: step.fields } : {}) };
    case 'deviceCode':
      return { action: 'device-code', url: step.url, code: step.code, message: step.message };
    case 'input':
      return { action: 'input', fields: step.fields };
    case 'done':
      return { action: 'done' };
  }
}

/** Login errors on the wire: bad input −32602, a login that failed −32803, each with its message. */
export async function loginErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (e instanceof LoginInputError) throw new ResponseError(InvalidParams, e.message);
    if (e instanceof LoginFailedError) throw new ResponseError(RequestFailed, e.message);
    throw e;
  }
}

/**
 * The provider's settings as ECA shows them: everything but the key, the model table and the
 * login's client config, and the URL without what may be a secret (`user:password@`, `?api-key=`).
 */
function settings(config: ProviderConfig): Record<string, unknown> {
  const { key: _key, models: _models, login: _login, url, ...rest } = config;
  return Object.fromEntries(Object.entries({ ...rest, ...(url !== undefined ? { url: maskedUrl(url) } : {}) }).filter(([, v]) => v !== undefined));
}
