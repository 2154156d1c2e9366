/**
 * (review) patchbay installed with its SQLite module's native addon never built (npm install
 * --ignore-scripts, or better-sqlite3's install script failed): a copy of the built package whose
 * better-sqlite3 has its JavaScript but no build/, every other dependency linked from the checkout.
 * `patchbay doctor` says what is missing and how to build it, once, with no stack and no list of
 * the paths `bindings` tried, and exits 1; `patchbay server` tells the editor and exits 1.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cliEnv, tempDir, workspace } from './harness.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** The built package with better-sqlite3 as an install without scripts leaves it: no build/. */
function packageWithoutAddon(): string {
  const pkg = join(tempDir('pb-noaddon-'), 'patchbay-ai');
  mkdirSync(join(pkg, 'node_modules'), { recursive: true });
  for (const f of ['bin', 'dist', 'package.json']) symlinkSync(join(ROOT, f), join(pkg, f));
  for (const name of readdirSync(join(ROOT, 'node_modules'))) {
    if (name !== 'better-sqlite3' && !name.startsWith('.')) symlinkSync(join(ROOT, 'node_modules', name), join(pkg, 'node_modules', name));
  }
  const sqlite = join(pkg, 'node_modules', 'better-sqlite3');
  for (const f of ['package.json', 'lib']) cpSync(join(ROOT, 'node_modules', 'better-sqlite3', f), join(sqlite, f), { recursive: true });
  return pkg;
}

function run(bin: string, args: string[], cwd: string, stdin?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const home = tempDir('pb-home-');
  const child = spawn(process.execPath, ['--preserve-symlinks', '--preserve-symlinks-main', bin, ...args], { cwd, env: cliEnv(home), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  if (stdin !== undefined) child.stdin.write(stdin);
  return new Promise((res, rej) => {
    const t = setTimeout(() => (child.kill('SIGKILL'), rej(new Error(`patchbay ${args[0]} did not exit\nstdout:\n${stdout}\nstderr:\n${stderr}`))), 30_000);
    child.on('exit', (code) => (clearTimeout(t), child.stdin.destroy(), res({ code, stdout, stderr })));
  });
}

function expectExplainedOnce(text: string, pkg: string): void {
  expect(text).toContain('its SQLite module (better-sqlite3) has no native addon for this Node');
  expect(text).toContain(`cd ${pkg} && npm rebuild better-sqlite3`);
  expect(text.split('patchbay cannot start').length - 1).toBe(1);
  expect(text).not.toContain('Could not locate the bindings file');
  expect(text).not.toMatch(/^\s+at /m);
}

describe('better-sqlite3 without its native addon', () => {
  it('patchbay doctor says so and how to build it, once, exit 1', async () => {
    const pkg = packageWithoutAddon();
    const r = await run(join(pkg, 'bin', 'patchbay'), ['doctor'], workspace());
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expectExplainedOnce(r.stdout + r.stderr, pkg);
  });

  it('patchbay server tells the editor and exits 1 (it used to stay up without a store)', async () => {
    const pkg = packageWithoutAddon();
    const root = workspace();
    const frame = (m: object) => {
      const body = JSON.stringify({ jsonrpc: '2.0', ...m });
      return `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    };
    const init =
      frame({ id: 1, method: 'initialize', params: { processId: null, workspaceFolders: [{ uri: pathToFileURL(root).href, name: 'w' }], capabilities: {} } }) +
      frame({ method: 'initialized', params: {} });
    const r = await run(join(pkg, 'bin', 'patchbay'), ['server'], root, init);
    expect(r.code, r.stderr).toBe(1);
    expectExplainedOnce(r.stderr, pkg);
    expect(r.stdout).toContain('has no native addon for this Node');
  });
});
