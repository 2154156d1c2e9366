// What a provider's or MCP server's URL looks like where an editor shows it (util/url.ts maskedUrl).
import { describe, expect, it } from 'vitest';
import { maskedUrl } from '../../src/util/url.js';

describe('maskedUrl', () => {
  it('drops user info and the fragment, masks each query value and keeps its name, host and path', () => {
    expect(maskedUrl('https://me:pw@host.example:8443/openai/v1?api-version=2024&api-key=sk-1#frag')).toBe('https://host.example:8443/openai/v1?api-version=…&api-key=…');
    expect(maskedUrl('http://127.0.0.1:11434')).toBe('http://127.0.0.1:11434');
    expect(maskedUrl('https://token@host/mcp?')).toBe('https://host/mcp');
  });

  it('shows a plain word as it is (the built-in local provider’s "local"), anything else unparsable not at all', () => {
    expect(maskedUrl('local')).toBe('local');
    expect(maskedUrl('me:pw@host/v1')).toBe('(an invalid url)');
  });
});
