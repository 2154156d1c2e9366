/**
 * patchbay run by another Node than the one its SQLite module (better-sqlite3) was installed with:
 * a real mismatch, the Node 22 of test/conformance/node22 (scripts/ensure-node22.mjs) running the
 * built binary against the module the test's own Node built. Each command says which Node is which
 * and how to fix it, once, without a stack, and exits 1.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN, cliEnv, runPatchbay, tempDir, workspace } from './harness.js';

const NODE22 = resolve(import.meta.dirname, '../../test/conformance/node22/node_modules/.bin/node');
if (!existsSync(NODE22)) throw new Error(`No Node 22 at ${NODE22}: run \`node scripts/ensure-node22.mjs\` (npm test does)`);
const other = JSON.parse(execFileSync(NODE22, ['-p', 'JSON.stringify({ version: process.version, modules: process.versions.modules })'], { encoding: 'utf8' })) as {
  version: string;
  modules: string;
};
const installedWith = `Node ${process.versions.node.split('.')[0]} (NODE_MODULE_VERSION ${process.versions.modules})`;

/** The message, and that it came once and alone: no stack frames, no Node internals. */
function expectExplainedOnce(text: string): void {
  expect(text).toContain(`its SQLite module (better-sqlite3) was installed with ${installedWith}, but this is Node ${other.version} (NODE_MODULE_VERSION ${other.modules}`);
  expect(text).toContain('npm rebuild better-sqlite3');
  expect(text).toContain(`run patchbay with the Node it was installed with (Node ${process.versions.node.split('.')[0]})`);
  expect(text.split('patchbay cannot start').length - 1).toBe(1);
  expect(text).not.toMatch(/^\s+at /m);
  expect(text).not.toContain('node:internal');
  expect(text).not.toContain('Please try re-compiling');
}

// Meaningless when the tests themselves run on an ABI-compatible Node 22.
describe.skipIf(other.modules === process.versions.modules)('a SQLite module built for another Node', () => {
  it('patchbay doctor says which Node built it, which runs it, and the fix; exit 1', async () => {
    const r = await runPatchbay(['doctor'], { node: NODE22, cwd: workspace() });
    expect(r.code).toBe(1);
    expectExplainedOnce(r.output);
  });

  it('patchbay chat says it once, before starting a server, and exits 1 (it used to hang)', async () => {
    const r = await runPatchbay(['chat', '-p', 'hi'], { node: NODE22, cwd: workspace() });
    expect(r.code).toBe(1);
    expectExplainedOnce(r.output);
  });

  it('patchbay server tells the editor ($/showMessage) and stderr once each, then exits 1', async () => {
    const home = tempDir('pb-home-');
    const root = workspace();
    const child = spawn(NODE22, [BIN, 'server'], { cwd: root, env: cliEnv(home), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const frame = (m: unknown) => {
      const body = JSON.stringify({ jsonrpc: '2.0', ...(m as object) });
      return `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    };
    // stdin stays open: the server must end by itself, not because the editor went away.
    child.stdin.write(frame({ id: 1, method: 'initialize', params: { processId: null, workspaceFolders: [{ uri: pathToFileURL(root).href, name: 'w' }], capabilities: {} } }));
    child.stdin.write(frame({ method: 'initialized', params: {} }));
    const code = await new Promise<number | null>((res, rej) => {
      const t = setTimeout(() => (child.kill('SIGKILL'), rej(new Error(`server did not exit\nstdout:\n${stdout}\nstderr:\n${stderr}`))), 30_000);
      child.on('exit', (c) => (clearTimeout(t), res(c)));
    });
    child.stdin.destroy();
    expect(code).toBe(1);
    expectExplainedOnce(stderr);
    const shown = stdout
      .split(/Content-Length: \d+\r\n\r\n/)
      .filter((part) => part.trim())
      .map((part) => JSON.parse(part) as { method?: string; params?: { type: string; message: string } });
    const errors = shown.filter((m) => m.method === '$/showMessage' && m.params?.type === 'error');
    expect(errors).toHaveLength(1);
    expectExplainedOnce(errors[0].params!.message);
  });
});
