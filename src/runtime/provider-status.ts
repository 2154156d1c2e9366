/**
 * How each provider is authenticated, for the editor's Providers panel and for doctor: where its
 * key comes from (config, login, environment), an OAuth login's expiry, or that it runs locally.
 * The order is the LLM layer's (`findKey`, as ECA's `llm-util/provider-api-key`) and the
 * "expiring" window ECA's `resolve-auth-info` (src/eca/features/providers.clj): a token that ends
 * within a day is "expiring". Never a key itself.
 */
import { findKey, type ModelEntry, type ProviderConfig } from '../peers/llm/index.js';
import type { Credential } from './provider-logins.js';

export interface ProviderAuth {
  status: 'authenticated' | 'expiring' | 'expired' | 'unauthenticated' | 'local' | 'not-running';
  type?: 'oauth' | 'api-key';
  source?: 'config' | 'login' | 'env';
  envVar?: string;
  /** Epoch seconds. */
  expiresAt?: number;
  /** The login method used (`browser`, `paste`, `device`). */
  mode?: string;
}

const LOCAL_APIS = new Set(['ollama', 'local']);
const EXPIRING_WITHIN_S = 86_400;

export function providerAuth(id: string, config: ProviderConfig | undefined, models: readonly ModelEntry[], env: NodeJS.ProcessEnv, login: Credential | undefined): ProviderAuth {
  const own = models.filter((m) => m.provider === id);
  const api = config?.api ?? own[0]?.api ?? (LOCAL_APIS.has(id) ? id : undefined);
  if (api && LOCAL_APIS.has(api)) return { status: own.length ? 'local' : 'not-running' };
  const found = findKey(id, config, env, login ? { [id]: login.type === 'api-key' ? login.key : login.accessToken } : undefined);
  if (!found) return { status: 'unauthenticated' };
  if (found.source === 'config') return { status: 'authenticated', type: 'api-key', source: 'config' };
  if (found.source === 'env') return { status: 'authenticated', type: 'api-key', source: 'env', ...(found.envVar ? { envVar: found.envVar } : {}) };
  const source = 'login';
  // ECA features/providers.clj `provider-login-input` stores an entered key with `:mode :manual`.
  if (login?.type !== 'oauth') return { status: 'authenticated', type: 'api-key', source, mode: 'manual' };
  const now = Date.now() / 1000;
  const exp = login.expiresAt;
  const status = exp === undefined ? 'authenticated' : exp <= now ? 'expired' : exp <= now + EXPIRING_WITHIN_S ? 'expiring' : 'authenticated';
  return { status, type: 'oauth', source, mode: login.mode, ...(exp !== undefined ? { expiresAt: exp } : {}) };
}

/** One line per provider for doctor: its auth state, never a value. */
export function providerAuthLine(id: string, a: ProviderAuth): string {
  return `  - ${id}: ${providerAuthSummary(a)}`;
}

/** The auth state in words (`authenticated, api-key from login (manual)`), for doctor and `patchbay login`. */
export function providerAuthSummary(a: ProviderAuth): string {
  const how = [a.type, a.source && `from ${a.source === 'env' ? (a.envVar ?? 'the environment') : a.source}`, a.mode && `(${a.mode})`].filter(Boolean).join(' ');
  const exp = a.expiresAt !== undefined ? `, expires ${new Date(a.expiresAt * 1000).toISOString()}` : '';
  return `${a.status}${how ? `, ${how}` : ''}${exp}`;
}
