/**
 * The MCP OAuth checks that need no server: which sign-in URLs are opened and how, the ID-JAG
 * audience, and which `redirectUri` values a config may name.
 */
import { describe, expect, it } from 'vitest';
import { browsableUrl, browserCommand } from '../../src/peers/mcp/oauth-browser.js';
import { verifiedIssuer } from '../../src/peers/mcp/oauth-machine.js';
import { parseServerEntry } from '../../src/peers/mcp/config.js';

describe('the sign-in URL opener', () => {
  it('opens https pages and http pages on this machine only', () => {
    expect(browsableUrl('https://auth.example/authorize?x=1&y=2')).toBe(true);
    expect(browsableUrl('http://127.0.0.1:8080/authorize')).toBe(true);
    expect(browsableUrl('http://localhost:8080/authorize')).toBe(true);
    expect(browsableUrl('http://[::1]:8080/authorize')).toBe(true);
    for (const bad of [
      'http://auth.example/authorize',
      'file:///etc/passwd',
      'smb://attacker.example/share/x.exe',
      'search-ms:query=x&crumb=location:\\\\attacker.example\\share',
      'vscode://extension/install',
      'javascript:alert(1)',
      'data:text/html,<b>x</b>',
      'not a url',
    ])
      expect(browsableUrl(bad), bad).toBe(false);
  });

  it('builds the argv per platform, never through a shell; on Windows the URL stays one argument, & and all', () => {
    const url = 'https://auth.example/authorize?a=1&b=2&calc.exe';
    expect(browserCommand(url, {}, 'win32')).toEqual(['rundll32', 'url.dll,FileProtocolHandler', url]);
    expect(browserCommand(url, {}, 'darwin')).toEqual(['open', url]);
    expect(browserCommand(url, {}, 'linux')).toEqual(['xdg-open', url]);
    expect(browserCommand(url, { BROWSER: ' firefox  --new-tab ' }, 'linux')).toEqual(['firefox', '--new-tab', url]);
    expect(browserCommand(url, {}, 'win32')).not.toContain('cmd');
  });
});

describe('id-jag audience', () => {
  const metadata = (issuer: string) => ({ issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, response_types_supported: ['code'] });

  it('is the authorization server found, when its metadata names it as issuer (trailing slash aside)', () => {
    expect(verifiedIssuer({ authorizationServerUrl: 'https://as.example', authorizationServerMetadata: metadata('https://as.example') })).toBe('https://as.example');
    expect(verifiedIssuer({ authorizationServerUrl: 'https://as.example/', authorizationServerMetadata: metadata('https://as.example') })).toBe('https://as.example');
  });

  it('is refused when the metadata names another issuer (RFC 8414 §3.3) or none', () => {
    expect(() => verifiedIssuer({ authorizationServerUrl: 'https://as.example', authorizationServerMetadata: metadata('https://victim.example') })).toThrow(
      /names issuer https:\/\/victim\.example, not https:\/\/as\.example .*refusing/,
    );
    expect(() => verifiedIssuer({ authorizationServerUrl: 'https://as.example' })).toThrow(/publishes no metadata with an issuer/);
    expect(() => verifiedIssuer(undefined)).toThrow(/authorization server is unknown/);
  });
});

describe('redirectUri in an MCP server entry', () => {
  const entry = (redirectUri: string) => parseServerEntry('s', { url: 'https://mcp.example/mcp', redirectUri });

  it('takes an http loopback URI with a port', () => {
    for (const ok of ['http://127.0.0.1:19284/auth/callback', 'http://localhost:19284/auth/callback', 'http://[::1]:8000/cb']) expect(entry(ok).ok, ok).toBe(true);
  });

  it('refuses https (no bundled certificate), other hosts, no port, other schemes', () => {
    const error = (v: string) => {
      const p = entry(v);
      return p.ok ? '' : p.error;
    };
    expect(error('https://localhost:19284/auth/callback')).toMatch(/https loopback redirects are not supported/);
    expect(error('http://evil.example:19284/auth/callback')).toMatch(/must point at this machine/);
    expect(error('http://127.0.0.1/auth/callback')).toMatch(/must name its port/);
    expect(error('myapp://callback')).toMatch(/must be an http URL/);
    expect(error('not a url')).toMatch(/must be a URL/);
  });
});
