/**
 * OAuth without a user, for MCP servers that patchbay reaches as a machine (the MCP authorization
 * extensions, https://github.com/modelcontextprotocol/ext-auth):
 *
 * - `client_credentials` (SEP-1046): the SDK's ClientCredentialsProvider (client_secret_basic) or
 *   PrivateKeyJwtProvider (private_key_jwt, RFC 7523 §2.2);
 * - enterprise-managed authorization (SEP-990, "cross-app access"): the enterprise IdP's ID token
 *   is exchanged at the IdP for an ID-JAG (RFC 8693 token exchange), which the MCP server's
 *   authorization server takes as a JWT bearer grant (RFC 7523 §2.1). The SDK's auth() does
 *   discovery, client authentication and the token request; only the exchange at the IdP is here.
 *
 * Tokens stay in memory: getting new ones needs nobody, so nothing is stored.
 */
import { ClientCredentialsProvider, PrivateKeyJwtProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { z } from 'zod';
import { rememberSecret } from '../../util/log.js';
import type { McpOAuthClient } from './oauth-provider.js';

/** The signed-in state every machine client shares: tokens in memory, no code, nothing stored. */
function machine<P extends OAuthClientProvider>(p: P): P & McpOAuthClient {
  const saveTokens = p.saveTokens.bind(p);
  const extra = {
    user: undefined,
    load: () => Promise.resolve(),
    takeCode: () => undefined,
    registeredPort: () => undefined,
    saveTokens(tokens: OAuthTokens) {
      rememberSecret(tokens.access_token);
      return saveTokens(tokens);
    },
    forget() {
      return Promise.resolve(saveTokens(undefined as unknown as OAuthTokens));
    },
  };
  const out = Object.assign(p, extra);
  // A getter (Object.assign would copy its value once): hasAuth follows the tokens.
  Object.defineProperty(out, 'authorized', { get: () => !!(p.tokens() as OAuthTokens | undefined)?.access_token });
  return out as P & McpOAuthClient;
}

export interface ClientCredentialsOptions {
  clientId: string;
  clientSecret?: string;
  /** PEM (PKCS#8) private key for private_key_jwt instead of a secret. */
  privateKey?: string;
  /** JWS algorithm for the private key; default RS256. */
  algorithm?: string;
  clientName?: string;
}

export function clientCredentialsClient(o: ClientCredentialsOptions): McpOAuthClient {
  if (o.privateKey) {
    rememberSecret(o.privateKey);
    return machine(new PrivateKeyJwtProvider({ clientId: o.clientId, privateKey: o.privateKey, algorithm: o.algorithm ?? 'RS256', ...(o.clientName ? { clientName: o.clientName } : {}) }));
  }
  if (!o.clientSecret) throw new Error('client_credentials needs "clientSecret" or "clientPrivateKey"');
  rememberSecret(o.clientSecret);
  return machine(new ClientCredentialsProvider({ clientId: o.clientId, clientSecret: o.clientSecret, ...(o.clientName ? { clientName: o.clientName } : {}) }));
}

export interface IdJagOptions {
  /** The MCP client's credentials at the MCP server's authorization server. */
  clientId: string;
  clientSecret?: string;
  clientName?: string;
  /** The enterprise IdP: its token endpoint, our client there, and the user's ID token from it. */
  idpTokenEndpoint: string;
  idpClientId: string;
  idToken: string;
  fetch?: typeof fetch;
}

const tokenExchangeAnswer = z.object({ access_token: z.string().min(1), issued_token_type: z.string().optional() });

const TOKEN_TYPE_ID_JAG = 'urn:ietf:params:oauth:token-type:id-jag';

/** SEP-990: the ID token becomes an ID-JAG at the IdP, the ID-JAG an access token at the authorization server. */
class IdJagProvider implements OAuthClientProvider {
  private tokensValue: OAuthTokens | undefined;
  private discovery: OAuthDiscoveryState | undefined;

  constructor(private readonly o: IdJagOptions) {
    rememberSecret(o.idToken);
    if (o.clientSecret) rememberSecret(o.clientSecret);
  }

  // No redirect: the SDK takes the non-interactive path and asks prepareTokenRequest for the grant.
  get redirectUrl(): undefined {
    return undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.o.clientName ?? 'patchbay',
      redirect_uris: [],
      grant_types: ['urn:ietf:params:oauth:grant-type:jwt-bearer'],
      token_endpoint_auth_method: this.o.clientSecret ? 'client_secret_basic' : 'none',
    };
  }

  clientInformation(): OAuthClientInformationMixed {
    return { client_id: this.o.clientId, ...(this.o.clientSecret ? { client_secret: this.o.clientSecret } : {}) };
  }

  tokens(): OAuthTokens | undefined {
    return this.tokensValue;
  }

  saveTokens(tokens: OAuthTokens): void {
    rememberSecret(tokens.access_token);
    this.tokensValue = tokens;
  }

  redirectToAuthorization(): void {
    throw new Error('enterprise-managed authorization has no browser step');
  }

  saveCodeVerifier(): void {}

  codeVerifier(): string {
    throw new Error('enterprise-managed authorization uses no PKCE verifier');
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }

  async prepareTokenRequest(scope?: string): Promise<URLSearchParams> {
    const issuer = verifiedIssuer(this.discovery);
    const resource = this.discovery?.resourceMetadata?.resource;
    if (!resource) throw new Error("enterprise-managed authorization: the server's resource is unknown (no protected-resource metadata)");
    const body = new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      requested_token_type: TOKEN_TYPE_ID_JAG,
      audience: issuer,
      resource,
      subject_token: this.o.idToken,
      subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
      client_id: this.o.idpClientId,
      ...(scope ? { scope } : {}),
    });
    const res = await (this.o.fetch ?? fetch)(this.o.idpTokenEndpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body });
    const text = await res.text();
    if (!res.ok) throw new Error(`the identity provider refused the token exchange (HTTP ${res.status}): ${text.slice(0, 200)}`);
    let parsed: z.infer<typeof tokenExchangeAnswer>;
    try {
      parsed = tokenExchangeAnswer.parse(JSON.parse(text));
    } catch {
      throw new Error(`the identity provider's token exchange answer is not a token (HTTP ${res.status})`);
    }
    rememberSecret(parsed.access_token);
    return new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: parsed.access_token, ...(scope ? { scope } : {}) });
  }
}

/**
 * The ID-JAG's audience: the authorization server we found and will send it to. Its metadata's
 * `issuer` must be that same URL (RFC 8414 §3.3): metadata naming another issuer could otherwise
 * have the IdP mint a grant for a server of its choosing (a confused deputy).
 */
export function verifiedIssuer(d: OAuthDiscoveryState | undefined): string {
  const url = d?.authorizationServerUrl;
  if (!url) throw new Error("enterprise-managed authorization: the server's authorization server is unknown (no metadata)");
  const issuer = d.authorizationServerMetadata?.issuer;
  if (issuer === undefined) throw new Error(`enterprise-managed authorization: the authorization server ${url} publishes no metadata with an issuer`);
  if (sameUrl(issuer, url)) return issuer;
  throw new Error(`enterprise-managed authorization: the authorization server's metadata names issuer ${issuer}, not ${url} where it was found (RFC 8414 §3.3); refusing`);
}

/** Equal as URLs (`https://as.example` and `https://as.example/` are one issuer). */
function sameUrl(a: string, b: string): boolean {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return false;
  }
}

export function idJagClient(o: IdJagOptions): McpOAuthClient {
  return machine(new IdJagProvider(o));
}
