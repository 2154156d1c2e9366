/**
 * A provider login as stored under `provider/<id>` in the secret store (JSON), and the helpers
 * that build, read and compare it. Every secret read back is handed to the log's redaction.
 */
import { rememberSecret } from '../util/log.js';
import type { Tokens } from '../util/oauth.js';

export type LoginMethodKey = 'api-key' | 'browser' | 'paste' | 'device';

/** What is stored under `provider/<id>` (JSON). */
export type Credential =
  | { type: 'api-key'; key: string }
  | {
      type: 'oauth';
      mode: LoginMethodKey;
      accessToken: string;
      refreshToken?: string;
      expiresAt?: number;
      /** Where the tokens came from: refreshed there even if the config changes meanwhile. */
      tokenUrl?: string;
      clientId?: string;
    };

/** The login record of tokens just issued, with where they came from. */
export function oauthCredential(mode: LoginMethodKey, t: Tokens, from: { tokenUrl?: string; clientId: string }): Credential {
  return {
    type: 'oauth',
    mode,
    accessToken: t.accessToken,
    ...(t.refreshToken ? { refreshToken: t.refreshToken } : {}),
    ...(t.expiresAt !== undefined ? { expiresAt: t.expiresAt } : {}),
    ...(from.tokenUrl ? { tokenUrl: from.tokenUrl } : {}),
    clientId: from.clientId,
  };
}

/** A stored login, or undefined when it is not one (reported by the caller). */
export function parseCredential(raw: string): Credential | undefined {
  try {
    const c = JSON.parse(raw) as Partial<Record<string, unknown>>;
    if (c.type === 'api-key' && typeof c.key === 'string') return { type: 'api-key', key: rememberSecret(c.key) };
    if (c.type === 'oauth' && typeof c.accessToken === 'string') {
      rememberSecret(c.accessToken);
      if (typeof c.refreshToken === 'string') rememberSecret(c.refreshToken);
      return c as Credential;
    }
  } catch {
    /* not JSON: reported by the caller */
  }
  return undefined;
}

/** The same login (another process may have stored a newer one, an API key, or nothing). */
export function sameCredential(a: Credential | undefined, b: Credential): boolean {
  if (!a || a.type !== b.type) return false;
  if (a.type === 'api-key') return b.type === 'api-key' && a.key === b.key;
  return b.type === 'oauth' && a.accessToken === b.accessToken && a.refreshToken === b.refreshToken;
}
