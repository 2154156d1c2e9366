// `/trust` applies what it can at once: names with dots are one name (providers["my.prov"], mcpServers["a.b"]).
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { trustHeldBack } from '../../src/runtime/trust.js';
import type { WorkspaceConfig } from '../../src/runtime/workspace-config.js';

describe('trustHeldBack', () => {
  it('takes a dotted provider or MCP server name whole', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'pb-session-trust-'));
    const root = join(tmp, 'ws');
    mkdirSync(join(root, '.patchbay'), { recursive: true });
    writeFileSync(join(root, '.patchbay', 'config.json'), JSON.stringify({ providers: { 'my.prov': { url: 'https://x.example/v1' } }, mcpServers: { 'a.b': { command: 'true' } } }));
    const env = { PATCHBAY_HOME: join(tmp, 'home') };
    const load = (): WorkspaceConfig => ({ roots: [root], ...loadConfig({ roots: [root], env, homeDir: tmp }) });
    const first = load();
    expect(first.workspaces[0].state).toBe('untrusted');
    const changed: string[][] = [];
    let reloaded: WorkspaceConfig | undefined;
    const text = await trustHeldBack({
      home: env.PATCHBAY_HOME,
      workspaces: first.workspaces,
      roots: [root],
      coveredFiles: async () => ({}),
      reload: () => (reloaded = load()),
      apply: () => {},
      // As the MCP peer does: the servers of the reloaded config with a new name are taken up now.
      reconfigurePeers: () => Object.keys(reloaded!.config.mcpServers).map((name) => ['mcpServers', name]),
      modelsChanged: async (providers) => void changed.push(providers),
    });
    expect(Object.keys(reloaded!.config.mcpServers)).toEqual(['a.b']);
    expect(changed).toEqual([['my.prov']]);
    expect(text).toContain('Applied now: mcpServers["a.b"] (runs "true"), providers["my.prov"].url (sends prompts to https://x.example/v1).');
    expect(text).not.toContain('after you restart');
  });

  it('says the rules settings apply now: instructions and rules are read again at the next request (runtime/instructions.ts)', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'pb-session-trust-'));
    const root = join(tmp, 'ws');
    mkdirSync(join(root, '.patchbay'), { recursive: true });
    writeFileSync(join(root, '.patchbay', 'config.json'), JSON.stringify({ includeParentAgentsFiles: true, rules: [{ path: '~/team-rules' }] }));
    const env = { PATCHBAY_HOME: join(tmp, 'home') };
    const load = (): WorkspaceConfig => ({ roots: [root], ...loadConfig({ roots: [root], env, homeDir: tmp }) });
    const first = load();
    const text = await trustHeldBack({
      home: env.PATCHBAY_HOME,
      workspaces: first.workspaces,
      roots: [root],
      coveredFiles: async () => ({}),
      reload: load,
      apply: () => {},
      reconfigurePeers: () => [],
      modelsChanged: async () => {},
    });
    expect(text).toMatch(/Applied now: .*rules\.0/);
    expect(text).toMatch(/Applied now: .*includeParentAgentsFiles: true/);
    expect(text).not.toContain('after you restart');
  });
});
