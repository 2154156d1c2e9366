/**
 * The `hooks` config key (src/config/hooks.ts, ECA docs/config/hooks.md "Configuration"): a bad
 * entry is reported and dropped while the rest of the file applies; an untrusted folder's hooks
 * are held back (config/held-back.ts), a trusted folder's apply.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { heldBack, loadConfig, patchbayHome } from '../../src/config/load.js';
import { contentHash, recordTrust } from '../../src/config/trust.js';

let tmp: string;
let home: string;
let ws: string;
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'patchbay-hooks-config-'));
  home = join(tmp, 'home');
  ws = join(tmp, 'ws');
  mkdirSync(home, { recursive: true });
  mkdirSync(join(ws, '.patchbay'), { recursive: true });
});
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

const good = { type: 'preToolCall', matcher: 'eca__shell_command', actions: [{ type: 'shell', shell: 'true', timeout: 500 }] };

function userConfig(value: unknown): string {
  const file = join(home, '.config', 'patchbay', 'config.json');
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, JSON.stringify(value));
  return file;
}

describe('hooks config', () => {
  it('keeps good hooks, and reports and drops bad ones without losing the rest of the file', () => {
    userConfig({
      hooks: {
        good,
        noActions: { type: 'preRequest' },
        badType: { type: 'beforeEverything', actions: [{ type: 'shell', shell: 'true' }] },
        both: { type: 'preRequest', actions: [{ type: 'shell', shell: 'true', file: 'x.sh' }] },
      },
      defaultModel: 'kept',
    });
    const r = loadConfig({ roots: [], env: {}, homeDir: home });
    expect(r.config.defaultModel).toBe('kept');
    // The action with both `shell` and `file` is dropped, then its hook, left with no action.
    expect(Object.keys(r.config.hooks ?? {})).toEqual(['good']);
    expect(r.config.hooks?.good).toEqual(good);
    const keys = r.errors.map((e) => e.key);
    expect(keys).toEqual(expect.arrayContaining(['hooks.noActions.actions', 'hooks.badType.type', 'hooks.both.actions[0]']));
    expect(r.errors.find((e) => e.key === 'hooks.both.actions[0]')?.message).toMatch(/exactly one of "shell" and "file"/);
  });

  it('an untrusted folder’s hooks are held back; once trusted they apply', () => {
    const file = join(ws, '.patchbay', 'config.json');
    writeFileSync(file, JSON.stringify({ hooks: { evil: good } }));
    const r = loadConfig({ roots: [ws], env: {}, homeDir: home });
    expect(heldBack(r)[0].settings.map((s) => s.key)).toEqual(['hooks']);
    expect(r.config.hooks).toBeUndefined();
    recordTrust(patchbayHome({}, home), ws, contentHash(readFileSync(file, 'utf8')));
    expect(loadConfig({ roots: [ws], env: {}, homeDir: home }).config.hooks).toEqual({ evil: good });
  });
});
