/**
 * `/variant` in interactive `patchbay chat` (a real pseudo-terminal, the built binary and its own
 * `patchbay server`): the variants come from `config/updated`, the one picked goes with each
 * prompt as `variant`, and a model change asks the server whether it is kept. Follows eca-emacs
 * `eca-chat.el` `eca-chat-select-variant` / `eca-chat--variant` (the client holds the selection
 * and sends `:variant` with `chat/prompt` and `chat/selectedModelChanged`).
 */
import { describe, expect, it } from 'vitest';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { KEY, usePty } from '../support/pty.js';
import { BIN, cliConfig, cliEnv, tempDir, useTempDirs, workspace } from './harness.js';

// Registered first so it runs last (after hooks run in reverse), once every process is stopped.
const scratch = useTempDirs();
const llm = useFakeLlm({ reset: 'afterEach' });
const spawn = usePty();

describe('patchbay chat: /variant', () => {
  it('lists the model’s variants, sends the one picked, and drops it on a model without it', async () => {
    llm().script([{ text: 'Deep.' }], [{ text: 'Plain.' }]);
    const config = cliConfig({
      providers: {
        fake: {
          api: 'openai-chat',
          url: `${llm().url}/v1`,
          key: 'x',
          models: { m1: { variants: { low: { reasoning_effort: 'low' }, high: { reasoning_effort: 'high' } } }, m2: {} },
        },
      },
      defaultModel: 'fake/m1',
      chat: { generateTitles: false, maxRetries: 0 },
    });
    const home = scratch(tempDir('pb-variant-home-'));
    const cwd = scratch(workspace({}, 'pb-variant-ws-'));
    const p = spawn(process.execPath, [BIN, 'chat'], { cwd, env: cliEnv(home, { PATCHBAY_CONFIG: config }) });
    await p.waitFor('/exit to quit');
    await p.waitFor('> ');

    p.write(`/variant${KEY.enter}`);
    await p.waitFor('Variant: -');
    await p.waitFor('  high');
    p.write(`/variant turbo${KEY.enter}`);
    await p.waitFor('Unknown variant "turbo". Available: high, low');
    p.write(`/variant high${KEY.enter}`);
    await p.waitFor('Variant: high');
    p.write(`think hard${KEY.enter}`);
    await p.waitFor('Deep.');
    await p.waitFor('> ');

    // m2 has no variants: the server clears the selection, and the next prompt goes without one.
    p.write(`/model m2${KEY.enter}`);
    await p.waitFor('Model: fake/m2');
    p.write(`/variant${KEY.enter}`);
    await p.waitFor('The model has no variants.');
    p.write(`again${KEY.enter}`);
    await p.waitFor('Plain.');

    const bodies = llm()
      .requests.filter((r) => r.path === '/v1/chat/completions')
      .map((r) => r.body);
    expect(bodies.map((b) => [b.model, b.reasoning_effort])).toEqual([
      ['m1', 'high'],
      ['m2', undefined],
    ]);
    p.write(KEY.ctrlD);
    expect(await p.exit()).toBe(0);
  });
});
