// Workspace.refreshModels runs may overlap (the start-up listing, and one a provider change
// began): whichever finishes last, the models are those of the run begun last.
import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { ModelEntry } from '../../src/shapes/llm.js';

const pending: Array<(models: ModelEntry[]) => void> = [];
vi.mock('../../src/peers/llm/index.js', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../../src/peers/llm/index.js')>()),
  // Each listing waits until the test answers it, in the order the test chooses.
  resolveModels: () => new Promise<ModelEntry[]>((r) => pending.push(r)),
}));
const { Workspace } = await import('../../src/runtime/workspace.js');

const entry = (id: string) => ({ id, provider: id.split('/')[0], model: id.split('/')[1] }) as unknown as ModelEntry;

describe('Workspace.refreshModels', () => {
  it('an older listing that finishes last does not overwrite the newer one', { timeout: 30_000 }, async () => {
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'pb-models-home-')));
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'pb-models-root-')));
    const ws = await Workspace.create({
      roots: [root],
      env: { HOME: home, PATCHBAY_HOME: join(home, '.patchbay'), XDG_CONFIG_HOME: join(home, '.config'), PATCHBAY_LOCAL_MODEL: 'off' },
      frontEnd: { canAsk: false, canShowDiffs: false },
      events: { event() {}, opened() {}, cleared() {}, deleted() {}, showMessage() {} },
      logLevel: 'error',
    });
    try {
      // The start-up listing begins off the handshake.
      await vi.waitFor(() => expect(pending).toHaveLength(1));
      const newer = ws.refreshModels();
      expect(pending).toHaveLength(2);
      pending[1]([entry('new/model')]);
      await newer;
      expect(ws.models.map((m) => m.id)).toEqual(['new/model']);
      pending[0]([entry('old/model')]);
      await ws.modelsReady;
      expect(ws.models.map((m) => m.id)).toEqual(['new/model']);
      expect(ws.defaultModel?.id).toBe('new/model');
    } finally {
      await ws.dispose();
    }
  });
});
