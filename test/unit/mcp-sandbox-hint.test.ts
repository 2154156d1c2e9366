/** What a workspace MCP server that failed to start in the OS sandbox is told (peers/mcp/server.ts sandboxHint). */
import { describe, expect, it } from 'vitest';
import { sandboxHint } from '../../src/peers/mcp/server.js';
import type { StdioServerConfig } from '../../src/peers/mcp/config.js';
import type { SandboxPlan } from '../../src/util/sandbox.js';

const plan = (network: boolean): Extract<SandboxPlan, { kind: 'sandboxed' }> => ({
  kind: 'sandboxed',
  policy: { writable: ['/work/repo'], readOnly: [], hidden: [], network },
  support: { ok: true, kind: 'bubblewrap', bwrap: '/usr/bin/bwrap', version: '0.8.0' },
  autoAllow: true,
  wrap: (argv) => argv,
});
const stdio = (command: string, args: string[] = []): StdioServerConfig => ({ kind: 'stdio', command, args, env: {}, disabled: false });

describe('sandboxHint', () => {
  it('says an npx / uvx / pnpm dlx launcher cannot download the server without the network, and the way out', () => {
    for (const [command, args, shown] of [
      ['npx', ['-y', '@acme/mcp'], 'npx'],
      ['/usr/local/bin/uvx', ['acme-mcp'], 'uvx'],
      ['pnpm', ['dlx', '@acme/mcp'], 'pnpm dlx'],
    ] as const) {
      const hint = sandboxHint('Connection closed; stderr: npm error code EAI_AGAIN', plan(false), stdio(command, [...args]));
      expect(hint).toContain(`\`${shown}\` cannot download the server`);
      expect(hint).toContain('"sandbox": {"network": true}');
      expect(hint).toContain("workspace's own config");
    }
  });

  it('with the network on, or for a server run by its own command, says what the sandbox stopped', () => {
    expect(sandboxHint('EROFS: read-only file system, open /etc/x', plan(true), stdio('npx', ['-y', 'x']))).toContain('read-only but /work/repo');
    expect(sandboxHint('Error: connect ECONNREFUSED 127.0.0.1:5432', plan(false), stdio('node', ['server.js']))).toContain('no network');
    expect(sandboxHint('Connection closed', plan(false), stdio('node', ['server.js']))).toContain('may write only in /work/repo and /tmp, and has no network');
  });
});
