/**
 * The OAuth side of a remote MCP connection (transport.ts opens it): Streamable HTTP that signs
 * in mid-request, and which failures mean "sign in" rather than "try the SSE transport".
 */
import { extractWWWAuthenticateParams, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport, StreamableHTTPError, type StreamableHTTPClientTransportOptions } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage } from '../../util/log.js';
import { guardedFetch, NotOAuthUnauthorized, type GuardedFetchOptions } from './oauth-fetch.js';
import { AuthorizationRequired, type McpOAuthClient } from './oauth-provider.js';

/**
 * Streamable HTTP whose requests survive a sign-in: when the SDK's own 401 / 403
 * `insufficient_scope` handling (auth()) had to send the user to the authorization page, the
 * SDK throws UnauthorizedError and expects the app to come back with the code (`finishAuth`).
 * Here that happens inside send(), so the request that met the challenge is sent again with the
 * new token instead of failing (initialize at first connection, any call on scope step-up). The
 * SDK itself stops a second step-up for the same challenge; MAX_SIGN_INS bounds the rest.
 */
export class SigningInTransport extends StreamableHTTPClientTransport {
  private readonly url: URL;
  private readonly fetchFn: FetchLike;
  /** The server answered 401 or 403 at least once: it speaks Streamable HTTP and wants OAuth. */
  challenged = false;
  /** The scope the last 403 `insufficient_scope` asked for. */
  private wantedScope: string | undefined;

  constructor(
    url: URL,
    opts: StreamableHTTPClientTransportOptions & { headers: readonly string[] },
    private readonly oauth: McpOAuthClient,
  ) {
    const { headers, ...rest } = opts;
    // The same fetch for MCP requests and the SDK's discovery and token calls; only the MCP
    // server's own answers say whether it wants OAuth.
    const fetchFn = guardedFetch({
      url,
      headers,
      ...oauthChallenge(oauth),
      onMcpResponse: (res) => {
        if (res.status === 401 || res.status === 403) this.challenged = true;
        if (res.status === 403) {
          const challenge = extractWWWAuthenticateParams(res);
          this.wantedScope = challenge.error === 'insufficient_scope' ? challenge.scope : undefined;
        }
      },
    });
    super(url, { ...rest, authProvider: oauth, fetch: fetchFn });
    this.url = url;
    this.fetchFn = fetchFn;
  }

  override async send(message: JSONRPCMessage | JSONRPCMessage[], options?: TransportSendOptions): Promise<void> {
    try {
      return await this.sendSigningIn(message, options);
    } finally {
      // Whatever came of a 401 met on the way, the lock it took is released.
      this.oauth.settle?.();
    }
  }

  private async sendSigningIn(message: JSONRPCMessage | JSONRPCMessage[], options?: TransportSendOptions): Promise<void> {
    for (let round = 0; ; round++) {
      try {
        return await super.send(message, options);
      } catch (e) {
        // The SDK's own step-up refreshed the token (same scope) and met the same 403: sign in again for the scope.
        const scope = e instanceof StreamableHTTPError && e.code === 403 ? this.wantedScope : undefined;
        if (scope && this.oauth.stepUp && round < MAX_SIGN_INS) {
          this.wantedScope = undefined;
          await this.oauth.stepUp(this.url.href, scope, this.fetchFn);
          continue;
        }
        if (!(e instanceof UnauthorizedError && round < MAX_SIGN_INS && (await finishSignIn(this.oauth, (code) => this.finishAuth(code))))) throw e;
      }
    }
  }
}

/** Sign-ins one request may go through (first sign-in, then a scope step-up). */
export const MAX_SIGN_INS = 2;

/**
 * Ends a sign-in the SDK started (it threw UnauthorizedError after sending the user to the
 * authorization page): waits for the user's code and exchanges it (`finishAuth`). False when no
 * sign-in was started, so the caller rethrows.
 */
export async function finishSignIn(oauth: McpOAuthClient, finishAuth: (code: string) => Promise<void>): Promise<boolean> {
  const code = oauth.takeCode();
  if (!code) return false;
  try {
    await finishAuth(await code);
  } catch (why) {
    throw new Error(`sign-in failed: ${errorMessage(why)}`, { cause: why });
  } finally {
    // A PKCE verifier serves one exchange, whatever its outcome.
    await oauth.invalidateCredentials?.('verifier');
  }
  return true;
}

/** The server wants a sign-in: trying SSE instead would only meet the same answer. */
export function isAuthError(e: unknown): boolean {
  return e instanceof AuthorizationRequired || e instanceof UnauthorizedError || (e instanceof Error && e.cause instanceof AuthorizationRequired);
}

/** The server answered, and refused us: no other transport will do better. */
export function isRefusal(e: unknown): boolean {
  return e instanceof NotOAuthUnauthorized;
}

/** The answers an SSE-only server gives a Streamable HTTP POST (spec "Backwards Compatibility"). */
export function isTransportMismatch(e: unknown): boolean {
  return e instanceof StreamableHTTPError && (e.code === 400 || e.code === 404 || e.code === 405);
}

/** guardedFetch's 401 handling for a client that shares its tokens with other patchbays. */
export function oauthChallenge(oauth: McpOAuthClient | undefined): Pick<GuardedFetchOptions, 'onChallenge' | 'onRecovered'> {
  if (!oauth?.adoptStored) return {};
  return {
    onChallenge: async () => ((await oauth.adoptStored!()) ? (await oauth.tokens())?.access_token : undefined),
    onRecovered: () => oauth.settle?.(),
  };
}
