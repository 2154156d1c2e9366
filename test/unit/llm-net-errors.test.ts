/** Which connection failures are retried, found however deep the SDKs and fetch nest them. */
import { describe, expect, it } from 'vitest';
import { toLlmError } from '../../src/peers/llm/errors.js';
import { connectionFailure, displayUrl } from '../../src/peers/llm/net-errors.js';

const sys = (code: string, message = code): Error => Object.assign(new Error(message), { code });
/** The shape the OpenAI and Anthropic SDKs throw: APIConnectionError → TypeError "fetch failed" → system error. */
const sdk = (inner: unknown): Error => {
  const fetchFailed = new TypeError('fetch failed', { cause: inner });
  const e = new Error('Connection error.', { cause: fetchFailed });
  e.name = 'APIConnectionError';
  return e;
};

describe('connectionFailure', () => {
  it.each([
    ['ECONNREFUSED', 'connection refused', false],
    ['ENOTFOUND', 'host not found', false],
    ['EAI_AGAIN', 'DNS lookup failed; is the network down?', false],
    ['ENETUNREACH', 'network unreachable', false],
    ['CERT_HAS_EXPIRED', 'certificate problem (CERT_HAS_EXPIRED)', false],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'certificate problem (DEPTH_ZERO_SELF_SIGNED_CERT)', false],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'certificate problem (ERR_TLS_CERT_ALTNAME_INVALID)', false],
    ['ECONNRESET', 'connection reset', true],
    ['UND_ERR_SOCKET', 'connection closed', true],
    ['UND_ERR_CONNECT_TIMEOUT', 'connection timed out', true],
  ])('%s under two causes: %s (retryable: %s)', (code, cause, retryable) => {
    expect(connectionFailure(sdk(sys(code)))).toMatchObject({ code, cause, retryable });
  });

  it('finds the code inside an AggregateError (every address of a host refused)', () => {
    const agg = new AggregateError([sys('ECONNREFUSED'), sys('ECONNREFUSED')], 'connect failed');
    expect(connectionFailure(sdk(agg))).toMatchObject({ code: 'ECONNREFUSED', retryable: false });
  });

  it('is undefined for errors that are not about the connection', () => {
    expect(connectionFailure(new Error('boom'))).toBeUndefined();
    expect(connectionFailure(sdk(sys('EWEIRD')))).toBeUndefined();
    expect(connectionFailure('text')).toBeUndefined();
  });
});

describe('toLlmError for connection failures', () => {
  it('names the url without its query or credentials, and never the key', () => {
    const e = toLlmError(sdk(sys('ECONNREFUSED')), 'my', 'sk-secret-1234', 'http://user:pw@127.0.0.1:5/v1?key=sk-secret-1234');
    expect(e).toMatchObject({ name: 'LlmError', retryable: false });
    expect(e.message).toMatch(/^Could not reach http:\/\/127\.0\.0\.1:5\/v1\?… \(connection refused\)\. Check the provider's url/);
    expect(e.message).not.toMatch(/sk-secret|pw@/);
  });

  it('a reset stays retryable and says it was lost', () => {
    expect(toLlmError(sdk(sys('ECONNRESET')), 'my', undefined, 'https://api.example/v1')).toMatchObject({
      retryable: true,
      message: 'Lost the connection to https://api.example/v1 (connection reset)',
    });
  });

  it('displayUrl keeps scheme, host, port and path', () => {
    expect(displayUrl('https://api.example.com/')).toBe('https://api.example.com');
    expect(displayUrl('http://[::1]:8080/v1#x')).toBe('http://[::1]:8080/v1');
    expect(displayUrl('nope')).toBe('(an invalid url)');
  });
});
