/**
 * docs/config-reference.md lists every config key: the committed page is exactly what the schema
 * renders, and every key has a description. A key added to the schema without `npm run
 * docs:config`, or without its line in src/config/key-docs.ts, fails here.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BEGIN_MARK, configKeyRows, END_MARK, parseEcaKeys, renderConfigReference, spliceConfigReference, undocumentedKeys } from '../../src/config/reference.js';
import { configSchema } from '../../src/config/schema.js';

const ROOT = resolve(import.meta.dirname, '../..');
const page = readFileSync(resolve(ROOT, 'docs/config-reference.md'), 'utf8');
const ecaKeys = readFileSync(resolve(ROOT, 'scripts/eca-config-keys.txt'), 'utf8');

describe('config reference', () => {
  it('the committed page is what the schema renders (run `npm run docs:config` after changing a key)', () => {
    expect(page).toContain(BEGIN_MARK);
    expect(page).toContain(END_MARK);
    expect(spliceConfigReference(page, renderConfigReference(ecaKeys))).toBe(page);
  });

  it('every key has a description, and key-docs.ts names no key the schema lacks', () => {
    expect(undocumentedKeys()).toEqual({ missing: [], stale: [] });
  });

  it('a key without a description is reported', () => {
    const rows = [...configKeyRows(), { path: 'brandNewKey', type: 'string' }];
    expect(undocumentedKeys(rows).missing).toEqual(['brandNewKey']);
  });

  it("lists every top-level key, the peers' keys and the entries they validate on their own", () => {
    const paths = new Set(configKeyRows().map((r) => r.path));
    for (const key of Object.keys(configSchema.shape)) expect(paths).toContain(key);
    for (const key of [
      'mcpServers.*.command',
      'mcpServers.*.url',
      'languageServers.*.command',
      'gateway.port',
      'openctx.host.port',
      'providers.*.models.*.limit.context',
      'hooks.*.actions[].shell',
      'rules[].path',
    ]) {
      expect(paths).toContain(key);
    }
  });

  it('renders a row with its type, default and ECA column', () => {
    const generated = renderConfigReference(ecaKeys);
    expect(generated).toContain('| `mcpTimeoutSeconds` | number (> 0) | `60` | yes |');
    expect(generated).toContain('| `mcpStartWaitSeconds` | number (≥ 0) | `30` | no |');
    expect(generated).toContain('| `chat.defaultAgent` | "code" \\| "plan" | `"code"` | no |');
  });

  it('a stale page is caught: an old generated part is replaced, not kept', () => {
    const stale = page.replace('| `mcpTimeoutSeconds` |', '| `mcpTimeoutSecondz` |');
    expect(stale).not.toBe(page);
    expect(spliceConfigReference(stale, renderConfigReference(ecaKeys))).toBe(page);
  });

  it("reads ECA's key list from the vendored file, which names its source commit", () => {
    expect(ecaKeys).toMatch(/^# Source: https:\/\/github\.com\/editor-code-assistant\/eca\/blob\/[0-9a-f]{40}\/docs\/config\.json$/m);
    const keys = parseEcaKeys(ecaKeys);
    expect(keys.has('toolCall.approval.byDefault')).toBe(true);
    expect(keys.has('mcpServers.*.command')).toBe(true);
    expect([...keys].some((k) => k.startsWith('#'))).toBe(false);
  });
});
