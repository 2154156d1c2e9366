/** runtime/config-reload.ts reloadConfig: what a reload applies, against real files. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reloadConfig, type ReloadTarget } from '../../src/runtime/config-reload.js';
import { configFingerprint, type WorkspaceConfig } from '../../src/runtime/workspace-config.js';
import { loadConfig } from '../../src/config/load.js';

function target(file: string) {
  const applied: unknown[] = [];
  const load = (): WorkspaceConfig => ({ roots: [], ...loadConfig({ roots: [], configFile: file, env: {} }) });
  const t: ReloadTarget = {
    files: () => [file],
    current: () => ({ config: load().config, errors: [], held: [] }),
    load,
    apply: (loaded) => void applied.push(loaded.config.mcpServers),
    reconfigurePeers: async () => undefined,
    modelsChanged: async () => undefined,
    report: () => undefined,
  };
  return { t, applied };
}

describe('reloadConfig and a save in place', () => {
  const TEXT = JSON.stringify({ mcpServers: { a: { command: 'a' } } });

  it('a file seen empty mid-save that is whole again soon after changes nothing', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'pb-reload-')), 'config.json');
    writeFileSync(file, TEXT);
    const { t, applied } = target(file);
    const last = { fingerprint: configFingerprint([file]) };
    writeFileSync(file, '');
    const reload = reloadConfig(t, last, 300);
    setTimeout(() => writeFileSync(file, TEXT), 50);
    expect(await reload).toEqual({ applied: false });
    expect(applied).toEqual([]);
  });

  it('a file that stays empty is applied once the settle time is over', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'pb-reload-')), 'config.json');
    writeFileSync(file, TEXT);
    const { t, applied } = target(file);
    const last = { fingerprint: configFingerprint([file]) };
    writeFileSync(file, '');
    expect(await reloadConfig(t, last, 50)).toEqual({ applied: true });
    expect(applied).toEqual([{}]);
  });
});
