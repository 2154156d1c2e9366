import { describe, expect, it } from 'vitest';
import { fallbackName, safeUrl } from '../../src/peers/openctx/client/names.js';

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

describe('safeUrl', () => {
  it('drops credentials and the query, which may carry tokens', () => {
    expect(safeUrl('https://user:pw@h.example:8443/a/b?token=x#f')).toBe('https://h.example:8443/a/b');
  });
});
