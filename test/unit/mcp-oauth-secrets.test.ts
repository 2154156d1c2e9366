/**
 * A configured MCP server's header values (API keys) and env values (tokens) are known secrets
 * from the moment its entry is parsed: anything quoting them later (an error body, stderr, a log
 * line) has them redacted.
 */
import { describe, expect, it } from 'vitest';
import { parseServerEntry } from '../../src/peers/mcp/config.js';
import { redact } from '../../src/util/log.js';

describe('MCP server entries and secrets', () => {
  it('a remote server’s header values and a stdio server’s env values are redacted once parsed', () => {
    const key = 'hdr-value-9f8e7d6c5b4a';
    const token = 'env-value-1a2b3c4d5e6f';
    expect(redact(`got ${key} and ${token}`)).toContain(key);
    expect(parseServerEntry('remote', { url: 'https://mcp.example.test/mcp', headers: { 'X-Api-Key': key } }).ok).toBe(true);
    expect(parseServerEntry('local', { command: 'node', env: { SERVICE_TOKEN: token } }).ok).toBe(true);
    expect(redact(`got ${key} and ${token}`)).toBe('got [redacted] and [redacted]');
  });
});
