/**
 * The OAuth side of a remote MCP connection (transport.ts opens it): Streamable HTTP that signs
 * in mid-request, and which failures mean "sign in" rather than "try the SSE transport".
 */
import { extractWWWAuthenticateParams, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport, StreamableHTTPError, type StreamableHTTPClientTransportOptions } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage } from '../../util/log.js';
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
  /** The server answered 401 or 403 at least once: it speaks Streamable HTTP and wants OAuth. */
  challenged = false;
  /** The scope the last 403 `insufficient_scope` asked for. */
  private wantedScope: string | undefined;

  constructor(
    url: URL,
    opts: StreamableHTTPClientTransportOptions,
    private readonly oauth: McpOAuthClient,
  ) {
    // The same fetch for MCP requests and the SDK's discovery and token calls.
    const noted: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (res.status === 401 || res.status === 403) this.challenged = true;
      if (res.status === 403) {
        const challenge = extractWWWAuthenticateParams(res);
        this.wantedScope = challenge.error === 'insufficient_scope' ? challenge.scope : undefined;
      }
      return res;
    };
    super(url, { ...opts, authProvider: oauth, fetch: noted });
    this.url = url;
  }

  override async send(message: JSONRPCMessage | JSONRPCMessage[], options?: TransportSendOptions): Promise<void> {
    for (let round = 0; ; round++) {
      try {
        return await super.send(message, options);
      } catch (e) {
        // The SDK's own step-up refreshed the token (same scope) and met the same 403: sign in again for the scope.
        const scope = e instanceof StreamableHTTPError && e.code === 403 ? this.wantedScope : undefined;
        if (scope && this.oauth.stepUp && round < MAX_SIGN_INS) {
          this.wantedScope = undefined;
          await this.oauth.stepUp(this.url.href, scope);
          continue;
        }
        const code = e instanceof UnauthorizedError && round < MAX_SIGN_INS ? this.oauth.takeCode() : undefined;
        if (!code) throw e;
        try {
          await this.finishAuth(await code);
        } catch (why) {
          throw new Error(`sign-in failed: ${errorMessage(why)}`, { cause: why });
        } finally {
          // A PKCE verifier serves one exchange, whatever its outcome.
          await this.oauth.invalidateCredentials?.('verifier');
        }
      }
    }
  }
}

/** Sign-ins one request may go through (first sign-in, then a scope step-up). */
const MAX_SIGN_INS = 2;

/** The server wants a sign-in: trying SSE instead would only meet the same answer. */
export function isAuthError(e: unknown): boolean {
  return e instanceof AuthorizationRequired || e instanceof UnauthorizedError || (e instanceof Error && e.cause instanceof AuthorizationRequired);
}

/** The answers an SSE-only server gives a Streamable HTTP POST (spec "Backwards Compatibility"). */
export function isTransportMismatch(e: unknown): boolean {
  return e instanceof StreamableHTTPError && (e.code === 400 || e.code === 404 || e.code === 405);
}
