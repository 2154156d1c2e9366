/** The message for a native addon built for another Node (src/util/native-module.ts). */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { explainNativeLoadError, isNativeModuleMismatch, NativeModuleMismatch } from '../../src/util/native-module.js';

/** Node's own words (node:internal/modules/cjs/loader), as better-sqlite3's bindings rethrow them. */
function dlopenError(file: string, built: number, wants: number): Error {
  return Object.assign(
    new Error(
      `The module '${file}'\nwas compiled against a different Node.js version using\nNODE_MODULE_VERSION ${built}. This version of Node.js requires\nNODE_MODULE_VERSION ${wants}. Please try re-compiling or re-installing\nthe module (for instance, using \`npm rebuild\` or \`npm install\`).`,
    ),
    { code: 'ERR_DLOPEN_FAILED' },
  );
}

const node24 = { version: 'v24.1.0', execPath: '/opt/node24/bin/node', modules: '137' };

describe('explainNativeLoadError', () => {
  it('names the Node that built the module, the one running, and where to rebuild', () => {
    const e = dlopenError('/usr/lib/node_modules/patchbay-ai/node_modules/better-sqlite3/build/Release/better_sqlite3.node', 115, 137);
    const m = explainNativeLoadError(e, 'better-sqlite3', node24)!;
    expect(m).toContain('installed with Node 20 (NODE_MODULE_VERSION 115), but this is Node v24.1.0 (NODE_MODULE_VERSION 137, /opt/node24/bin/node)');
    expect(m).toContain('run patchbay with the Node it was installed with (Node 20)');
    expect(m).toContain('cd /usr/lib/node_modules/patchbay-ai && npm rebuild better-sqlite3');
  });

  it('quotes an install folder with spaces, and says "a Node with" for an ABI it does not know', () => {
    const e = dlopenError('/Users/Ann Lee/app/node_modules/better-sqlite3/build/Release/better_sqlite3.node', 999, 137);
    const m = explainNativeLoadError(e, 'better-sqlite3', node24)!;
    expect(m).toContain('installed with a Node with NODE_MODULE_VERSION 999');
    expect(m).toContain('cd "/Users/Ann Lee/app" && npm rebuild better-sqlite3');
    expect(m).toContain('run patchbay with the Node it was installed with: put');
  });

  // (review) Installed with --ignore-scripts, or its install script failed: no addon at all, and
  // `bindings` (which better-sqlite3 loads it with) throws its list of the 13 paths it tried.
  it('an addon that was never built: says so and how to build it, without the list of paths tried', () => {
    const project = mkdtempSync(join(tmpdir(), 'native-missing-'));
    const root = join(project, 'node_modules', 'better-sqlite3');
    mkdirSync(root, { recursive: true });
    let err: unknown;
    try {
      createRequire(import.meta.url)('bindings')({ bindings: 'better_sqlite3.node', module_root: root });
    } catch (e) {
      err = e;
    }
    expect(String(err)).toContain('Could not locate the bindings file');
    const m = explainNativeLoadError(err, 'better-sqlite3', node24)!;
    expect(m).toContain('its SQLite module (better-sqlite3) has no native addon for this Node (v24.1.0, /opt/node24/bin/node)');
    expect(m).toContain(`cd ${project} && npm rebuild better-sqlite3`);
    expect(m).not.toContain('→');
  });

  it('a package that is not installed at all (ESM and CommonJS words)', () => {
    const esm = Object.assign(new Error("Cannot find package 'better-sqlite3' imported from /x/dist/store/sqlite.js"), { code: 'ERR_MODULE_NOT_FOUND' });
    const cjs = Object.assign(new Error("Cannot find module 'better-sqlite3'\nRequire stack:\n- /x/dist/bundle/main.cjs"), { code: 'MODULE_NOT_FOUND' });
    for (const e of [esm, cjs]) expect(explainNativeLoadError(e, 'better-sqlite3')).toContain('its SQLite module (better-sqlite3) is not installed. Reinstall patchbay: npm install -g patchbay-ai');
    const other = Object.assign(new Error("Cannot find package 'openai' imported from /x"), { code: 'ERR_MODULE_NOT_FOUND' });
    expect(explainNativeLoadError(other, 'better-sqlite3')).toBeUndefined();
  });

  it('leaves every other error alone', () => {
    expect(explainNativeLoadError(new Error('SQLITE_CANTOPEN: unable to open database file'), 'better-sqlite3')).toBeUndefined();
    expect(explainNativeLoadError('NODE_MODULE_VERSION 1. requires NODE_MODULE_VERSION 2', 'better-sqlite3')).toBeUndefined();
  });

  it('is recognised by name (the CLI prints it without a stack)', () => {
    expect(isNativeModuleMismatch(new NativeModuleMismatch('x'))).toBe(true);
    expect(isNativeModuleMismatch(new Error('x'))).toBe(false);
  });
});
