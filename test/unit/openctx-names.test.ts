import { describe, expect, it } from 'vitest';
import { fallbackName } from '../../src/peers/openctx/client/names.js';
import { displayUrl, scrubUrls } from '../../src/util/url.js';

describe('fallbackName: the name of a provider whose meta has none', () => {
  it.each([
    ['./tools/my-provider.mjs', 'my-provider'],
    ['/abs/path/notes.js', 'notes'],
    ['file:///abs/pkg/index.js', 'pkg'],
    ['../up/thing.ts', 'thing'],
    ['https://openctx.example/api/notes', 'notes'],
    ['https://openctx.example/', 'openctx.example'],
    ['@openctx/provider-linear-issues', '@openctx/provider-linear-issues'],
  ])('%s → %s', (uri, name) => expect(fallbackName(uri)).toBe(name));
});

describe('displayUrl', () => {
  it('drops credentials and the query, which may carry tokens', () => {
    expect(displayUrl('https://user:pw@h.example:8443/a/b?token=x#f')).toBe('https://h.example:8443/a/b?…');
    expect(displayUrl('http://127.0.0.1:9/')).toBe('http://127.0.0.1:9');
  });
  it('scrubs every URL in a text', () => {
    expect(scrubUrls('openctx.providers.http://h/ctx?token=sekrit (runs), https://u:p@x.example/a')).toBe('openctx.providers.http://h/ctx?… (runs), https://x.example/a');
  });
});
