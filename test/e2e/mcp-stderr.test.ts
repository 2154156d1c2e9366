/** An MCP server that quits during start-up: the error names why, from the last lines of its stderr. */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, cliEnv, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();
const NPX_404 = resolve(import.meta.dirname, '../fixtures/mcp-npx-404.mjs');
const TOKEN = 'npm_s3cr3t-token-value';
const typo = { command: process.execPath, args: [NPX_404], env: { MY_REGISTRY_TOKEN: TOKEN } };

describe('MCP start-up failures carry the tail of the server’s stderr', () => {
  it('tool/serverUpdated `failed` shows npm’s 404 instead of a bare "Connection closed", with secrets scrubbed', async () => {
    const p = track(new EcaProc({ home: tempDir(), config: fakeProviderConfig(llm().url, 'openai-chat', { mcpServers: { typo } }) }));
    await p.initialize(workspace());
    const failed = await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.name === 'typo' && m.params.status === 'failed', 'failed', 20_000);
    const error: string = failed.params.error;
    expect(error).toMatch(/^failed to start: .*Connection closed; stderr: /);
    expect(error).toContain('npm error 404 Not Found - GET https://registry.npmjs.org/@scope%2fdoes-not-exist - Not found');
    expect(error).toContain("'@scope/does-not-exist@*' is not in this registry.");
    // The value of the server's own env (a token) never shows; the line around it does.
    expect(error).toContain('auth with [redacted] failed');
    expect(error).not.toContain(TOKEN);
    // Bounded: the last lines only (the first of nine is gone).
    expect(error).not.toContain('code E404');
    expect(p.stderr).not.toContain(TOKEN);
  });

  it('patchbay doctor shows it as the last error; a real `npx --offline` of a missing package says why too', async () => {
    const home = tempDir();
    const npx = { command: 'npx', args: ['--offline', '-y', '@patchbay-test/does-not-exist-xyz'] };
    const config = fakeProviderConfig(llm().url, 'openai-chat', { mcpServers: { typo, npx } });
    const out = execFileSync(process.execPath, [BIN, 'doctor'], {
      cwd: workspace(),
      env: cliEnv(home, { PATCHBAY_CONFIG: JSON.stringify(config) }),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(out).toMatch(/- typo: failed, 0 tools.*last error: failed to start: .*stderr: .*npm error 404 Not Found - GET/);
    expect(out).not.toContain(TOKEN);
    // npm's own words for a package it cannot get (offline: not in the cache).
    expect(out).toMatch(/- npx: failed, 0 tools.*last error: failed to start: .*stderr: .*npm error code ENOTCACHED/);
  });
});
