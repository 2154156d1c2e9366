import { afterEach, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { isAlive } from '../../src/util/pid.js';
import { descendants, isZombie } from '../../src/util/process-tree.js';
import { makeHost, waitFor, type TestHost } from '../support/mcp-helpers.js';

const launcher = fileURLToPath(new URL('../fixtures/mcp-launcher.mjs', import.meta.url));
let h: TestHost | undefined;
afterEach(async () => {
  await h?.host.dispose();
  h = undefined;
});

describe('MCP servers started through a launcher', () => {
  it('dispose stops the launcher and the server it started: no orphans', async () => {
    h = makeHost({ launched: { command: process.execPath, args: [launcher] } });
    h.host.startAll();
    await waitFor(() => h!.host.servers().find((s) => s.name === 'launched' && s.status === 'running'), 'running', 30_000);
    const pid = (h.host as unknown as { pid(name: string): number | undefined }).pid('launched')!;
    const family = descendants(pid);
    expect(family.length).toBeGreaterThan(0);
    await h.host.dispose();
    const gone = (p: number) => !isAlive(p) || isZombie(p);
    expect(gone(pid)).toBe(true);
    for (const p of family) expect(gone(p)).toBe(true);
  });
});
