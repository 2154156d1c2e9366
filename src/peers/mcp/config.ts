/**
 * One `mcpServers.<name>` entry, as every MCP host (ECA, Claude Desktop, VS Code, Cursor) writes it:
 * stdio `{command, args?, env?}` or remote `{url, headers?}`, both with `disabled?`.
 * `${env:…}` references were already interpolated by the config loader.
 */
import { z } from 'zod';
import { isRecord } from '../../util/guards.js';
import { rememberSecret } from '../../util/log.js';
import { maskedUrl } from '../../util/url.js';
import { serverNameProblem } from '../../shapes/tool-names.js';

const common = {
  disabled: z.boolean().default(false),
};

export const stdioServerSchema = z.object({
  /** Some hosts write it; accepted and ignored. */
  type: z.literal('stdio').optional(),
  command: z.string().min(1, 'must not be empty'),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().optional(),
  ...common,
});

export const remoteServerSchema = z.object({
  /** `sse` skips the Streamable HTTP attempt; anything else tries Streamable HTTP first, then SSE. */
  type: z.enum(['http', 'streamable-http', 'streamableHttp', 'sse']).optional(),
  url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
  headers: z.record(z.string(), z.string()).default({}),
  /** OAuth (ECA's keys): a client registered with the server's authorization server beforehand. */
  clientId: z.string().min(1).optional(),
  /** Its secret, for confidential clients; kept out of every log. */
  clientSecret: z.string().min(1).optional(),
  /** `client_name` for dynamic registration (some servers accept only names they know). */
  clientName: z.string().min(1).optional(),
  /** The loopback port the sign-in redirect comes back to (a client registered for a fixed redirect). */
  oauthPort: z.number().int().min(1).max(65535).optional(),
  /** The exact redirect URI registered for the client (an http loopback URL with a port); wins over `oauthPort`. */
  redirectUri: z
    .string()
    .superRefine((v, ctx) => {
      const problem = redirectUriProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .optional(),
  /**
   * How patchbay gets its token: a user signs in (`authorization_code`, the default), patchbay signs
   * in as itself (`client_credentials`, with `clientSecret` or `clientPrivateKey`), or with an
   * enterprise IdP's ID token (`id-jag`, SEP-990, with `idp`).
   */
  grantType: z.enum(['authorization_code', 'client_credentials', 'id-jag']).optional(),
  /** PEM (PKCS#8) private key for `private_key_jwt` client authentication (`client_credentials`). */
  clientPrivateKey: z.string().min(1).optional(),
  /** Its JWS algorithm (default RS256). */
  clientSigningAlgorithm: z.string().min(1).optional(),
  /** The enterprise IdP for `grantType: "id-jag"`: its token endpoint, patchbay's client ID there, the user's ID token from it. */
  idp: z.object({ tokenEndpoint: z.url({ protocol: /^https?$/ }), clientId: z.string().min(1), idToken: z.string().min(1) }).optional(),
  /** An https URL serving patchbay's OAuth client ID metadata document (SEP-991), used where the server supports it. */
  clientMetadataUrl: z.url({ protocol: /^https$/, error: 'must be an https URL' }).optional(),
  ...common,
});

export type StdioServerConfig = z.infer<typeof stdioServerSchema> & { kind: 'stdio' };
export type RemoteServerConfig = z.infer<typeof remoteServerSchema> & { kind: 'remote' };
export type ServerConfig = StdioServerConfig | RemoteServerConfig;

export type ParsedEntry =
  | { ok: true; config: ServerConfig }
  /** `command`/`args` are best-effort, for `tool/serverUpdated` and `doctor`. */
  | { ok: false; error: string; command: string; args: string[] };

/** Validates one entry; never throws. */
export function parseServerEntry(name: string, raw: unknown): ParsedEntry {
  const obj = isRecord(raw) ? raw : undefined;
  const shown = {
    command: typeof obj?.command === 'string' ? obj.command : typeof obj?.url === 'string' ? maskedUrl(obj.url) : '',
    args: Array.isArray(obj?.args) ? obj.args.filter((a): a is string => typeof a === 'string') : [],
  };
  const badName = serverNameProblem(name);
  if (badName) return { ok: false, error: `mcpServers.${name}: the server name ${badName}; rename it`, ...shown };
  if (!obj) return { ok: false, error: `mcpServers.${name}: expected an object with "command" or "url"`, ...shown };
  if ('command' in obj && 'url' in obj) return { ok: false, error: `mcpServers.${name}: give either "command" or "url", not both`, ...shown };
  if (!('command' in obj) && !('url' in obj)) return { ok: false, error: `mcpServers.${name}: missing "command" (stdio) or "url" (remote)`, ...shown };
  const remote = 'url' in obj;
  const parsed = remote ? remoteServerSchema.safeParse(obj) : stdioServerSchema.safeParse(obj);
  // Header values (API keys) and env values (tokens) are secrets: whatever quotes them later (a
  // server's error body, its stderr, a log line) has them redacted. Known before anything starts.
  for (const values of [obj.headers, obj.env]) if (isRecord(values)) for (const v of Object.values(values)) if (typeof v === 'string') rememberSecret(v);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || 'entry'}: ${i.message}`);
    return { ok: false, error: `mcpServers.${name}: ${issues.join('; ')}`, ...shown };
  }
  const grantProblem = remote ? oauthGrantProblem(parsed.data as z.infer<typeof remoteServerSchema>) : undefined;
  if (grantProblem) return { ok: false, error: `mcpServers.${name}: ${grantProblem}`, ...shown };
  return { ok: true, config: remote ? { ...(parsed.data as z.infer<typeof remoteServerSchema>), kind: 'remote' } : { ...(parsed.data as z.infer<typeof stdioServerSchema>), kind: 'stdio' } };
}

/**
 * A redirect patchbay can listen at: http on a loopback address with an explicit port (RFC 8252
 * §7.3). ECA's https loopback redirect needs its bundled certificate, which patchbay does not have.
 */
function redirectUriProblem(v: string): string | undefined {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    return 'must be a URL such as http://127.0.0.1:19284/auth/callback';
  }
  if (u.protocol === 'https:') return 'https loopback redirects are not supported (ECA serves them with a bundled certificate); register http://127.0.0.1:<port>/auth/callback instead';
  if (u.protocol !== 'http:') return 'must be an http URL';
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname)) return 'must point at this machine (127.0.0.1, localhost or [::1])';
  if (!u.port) return 'must name its port';
  if (u.search || u.hash || u.username) return 'must have no query, fragment or user info';
  return undefined;
}

/** What a `grantType` needs besides itself. */
function oauthGrantProblem(c: z.infer<typeof remoteServerSchema>): string | undefined {
  if (c.grantType === 'client_credentials' && (!c.clientId || !(c.clientSecret || c.clientPrivateKey)))
    return 'grantType "client_credentials" needs "clientId" and "clientSecret" or "clientPrivateKey"';
  if (c.grantType === 'id-jag' && (!c.clientId || !c.idp)) return 'grantType "id-jag" needs "clientId" and "idp" ({tokenEndpoint, clientId, idToken})';
  return undefined;
}

/** What `tool/serverUpdated` shows as the server's command line; a URL without its secrets (url.ts maskedUrl). */
export function displayCommand(config: ServerConfig): { command: string; args: string[] } {
  return config.kind === 'stdio' ? { command: config.command, args: config.args } : { command: maskedUrl(config.url), args: [] };
}
