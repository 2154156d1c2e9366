/**
 * Model variants (named request payloads such as reasoning effort) as ECA has them, over the
 * built binary and real stdio, against the fake LLM server recording each request body.
 *
 * Follows: eca `docs/protocol.md` "Chat Prompt" (`variant`), "Chat selected model changed",
 * "Chat open" (`selection`), "Config updated" (`variants`, `selectVariant`); eca `src/eca/config.clj`
 * `variantsByModel` (built-in variants), `effective-model-variants`, `selectable-variant-names`,
 * `notify-selected-model-changed!`; eca `src/eca/handlers.clj` `chat-selected-model-changed` and
 * `notify-chat-config-state!`; eca `src/eca/llm_api.clj` `extra-payload-considering-variant`. The
 * plugins: eca-emacs `eca-chat.el` sends `:variant` with `chat/prompt` (`eca-chat--variant`) and
 * applies `variants`/`selectVariant` from `config/updated`; eca-webview `src/protocol.ts`.
 */
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, runPatchbay, tempDir, useFakeLlmSuite, useTempDirs, workspace, type Msg } from './harness.js';
import type { RecordedRequest } from '../fixtures/fake-llm.js';

const scratch = useTempDirs();
const { llm, track } = useFakeLlmSuite();

/**
 * Three providers on the fake LLM: `fake` (openai-chat) with variants of its own on m1 and an
 * `extraPayload`, m2 without any; `oai` (openai-responses) with gpt-5.2, whose variants are ECA's
 * built-in ones minus `xhigh`; `ant` (anthropic) with claude-opus-4-6 (built-in variants); `oll`
 * (ollama) with one of its own.
 */
function config(m1: Record<string, unknown> = {}): Record<string, unknown> {
  const url = llm().url;
  return {
    providers: {
      fake: {
        api: 'openai-chat',
        url: `${url}/v1`,
        key: 'k',
        models: {
          m1: {
            variants: { low: { reasoning_effort: 'low' }, high: { reasoning_effort: 'high', metadata: { tier: 'deep' } } },
            extraPayload: { reasoning_effort: 'minimal', metadata: { team: 'core' } },
            ...m1,
          },
          m2: {},
        },
      },
      oai: { api: 'openai-responses', url: `${url}/v1`, key: 'k', models: { 'gpt-5.2': { variants: { xhigh: {} } } } },
      ant: { api: 'anthropic', url, key: 'k', models: { 'claude-opus-4-6': {} } },
      oll: { api: 'ollama', url, models: { qwen3: { variants: { quick: { think: false, options: { temperature: 0 } } } } } },
    },
    defaultModel: 'fake/m1',
    chat: { generateTitles: false, maxRetries: 0 },
  };
}

async function boot(home: string, root: string, cfg = config()): Promise<EcaProc> {
  const p = track(new EcaProc({ home, config: cfg }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === ECA.configUpdated.method && m.params.chat?.models !== undefined, 'the first config/updated');
  return p;
}

/** Prompts and waits for the turn's end; returns the request body the model got. */
async function prompt(p: EcaProc, params: Record<string, unknown>): Promise<RecordedRequest['body']> {
  const before = llm().requests.length;
  const res = await p.request(ECA.chatPrompt, { message: 'hi', ...params });
  const chatId = res.result.chatId as string;
  const nth = p.messages.filter((m) => m.method === ECA.chatContentReceived.method && m.params.chatId === chatId && m.params.content.state === 'finished').length + 1;
  await p.turnDone(chatId, nth);
  expect(llm().requests.length).toBe(before + 1);
  return llm().requests[before].body;
}

const configUpdates = (p: EcaProc, from = 0): Msg['params'][] => p.messages.slice(from).flatMap((m) => (m.method === ECA.configUpdated.method ? [m.params] : []));

/** The next config/updated from message `from` on. */
const nextConfig = (p: EcaProc, from: number): Promise<Msg> => p.waitFor((m) => m.method === ECA.configUpdated.method, 'config/updated', 15_000, from);

describe('model variants', () => {
  it('config/updated after initialized offers the default model’s variants, sorted, none selected', async () => {
    const p = await boot(scratch(tempDir()), scratch(workspace()));
    const [first] = configUpdates(p);
    expect(first.chat).toMatchObject({ selectModel: 'fake/m1', variants: ['high', 'low'], selectVariant: null });
  });

  it('the chosen variant’s payload is in the request each API sends, over extraPayload', async () => {
    const p = await boot(scratch(tempDir()), scratch(workspace()));

    // openai-chat: the config's own variant; its keys win over extraPayload's, objects merge.
    const chat = await prompt(p, { chatId: 'c-1', model: 'fake/m1', variant: 'high' });
    expect(chat.reasoning_effort).toBe('high');
    expect(chat.metadata).toEqual({ team: 'core', tier: 'deep' });
    // No variant named: extraPayload alone (the model has no `default` variant).
    const plain = await prompt(p, { chatId: 'c-1', model: 'fake/m1' });
    expect(plain.reasoning_effort).toBe('minimal');
    expect(plain.metadata).toEqual({ team: 'core' });

    // openai-responses: ECA's built-in gpt-5.2 variants (config.clj `openai-variants`).
    const responses = await prompt(p, { chatId: 'c-2', model: 'oai/gpt-5.2', variant: 'low' });
    expect(responses.reasoning).toEqual({ effort: 'low', summary: 'auto' });

    // anthropic: ECA's built-in opus 4.6 variants (config.clj `anthropic-variants`).
    const anthropic = await prompt(p, { chatId: 'c-3', model: 'ant/claude-opus-4-6', variant: 'max' });
    expect(anthropic.thinking).toEqual({ type: 'adaptive' });
    expect(anthropic.output_config).toEqual({ effort: 'max' });

    // ollama: merged into the body patchbay builds (`options` keeps its `num_predict`… when set).
    const ollama = await prompt(p, { chatId: 'c-4', model: 'oll/qwen3', variant: 'quick' });
    expect(ollama.think).toBe(false);
    expect(ollama.options).toEqual({ temperature: 0 });
  });

  it('chat/selectedModelChanged answers with the model’s variants and what stays selected, scoped to the chat', async () => {
    const p = await boot(scratch(tempDir()), scratch(workspace()));
    await prompt(p, { chatId: 'c-1', variant: 'high' });

    // A model without variants: nothing to select (ECA: select-variant null clears it).
    let from = p.messages.length;
    p.notify(ECA.chatSelectedModelChanged, { chatId: 'c-1', model: 'fake/m2', variant: 'high' });
    expect((await nextConfig(p, from)).params).toEqual({ chatId: 'c-1', chat: { variants: [], selectVariant: null } });

    // Back on m1 with no variant sent: the chat's own is still valid there and selected again.
    from = p.messages.length;
    p.notify(ECA.chatSelectedModelChanged, { chatId: 'c-1', model: 'fake/m1' });
    expect((await nextConfig(p, from)).params).toEqual({ chatId: 'c-1', chat: { variants: ['high', 'low'], selectVariant: 'high' } });

    // gpt-5.2's built-ins minus the `xhigh` the config removed with `{}`: the variant sent is kept when offered…
    from = p.messages.length;
    p.notify(ECA.chatSelectedModelChanged, { chatId: 'c-1', model: 'oai/gpt-5.2', variant: 'medium' });
    expect((await nextConfig(p, from)).params).toEqual({ chatId: 'c-1', chat: { variants: ['high', 'low', 'medium', 'none'], selectVariant: 'medium' } });

    // …and cleared when not; without a chat id (or an unknown one) the update is session-wide.
    from = p.messages.length;
    p.notify(ECA.chatSelectedModelChanged, { model: 'oai/gpt-5.2', variant: 'xhigh' });
    expect((await nextConfig(p, from)).params).toEqual({ chat: { variants: ['high', 'low', 'medium', 'none'], selectVariant: null } });
    from = p.messages.length;
    p.notify(ECA.chatSelectedModelChanged, { chatId: 'nope', model: 'fake/m1', variant: 'low' });
    expect((await nextConfig(p, from)).params).toEqual({ chat: { variants: ['high', 'low'], selectVariant: 'low' } });

    // The chat's next prompt without a model uses what was selected for it.
    const body = await prompt(p, { chatId: 'c-1', variant: 'medium' });
    expect(body.model).toBe('gpt-5.2');
    expect(body.reasoning).toEqual({ effort: 'medium', summary: 'auto' });
  });

  it('a chat’s variant survives a restart: chat/open selects it, in ECA’s order', async () => {
    const home = scratch(tempDir());
    const root = scratch(workspace());
    const p = await boot(home, root);
    await prompt(p, { chatId: 'by-prompt', variant: 'high' });
    await prompt(p, { chatId: 'by-select' });
    const from = p.messages.length;
    p.notify(ECA.chatSelectedModelChanged, { chatId: 'by-select', model: 'fake/m1', variant: 'low' });
    await nextConfig(p, from);
    await p.stop();

    const q = await boot(home, root);
    for (const [chatId, variant] of [
      ['by-prompt', 'high'],
      ['by-select', 'low'],
    ]) {
      const start = q.messages.length;
      const res = await q.request(ECA.chatOpen, { chatId });
      const updates = configUpdates(q, start);
      expect(updates).toEqual([
        { chatId, chat: { selectModel: 'fake/m1', variants: ['high', 'low'], selectVariant: variant } },
        { chatId, chat: { selectTrust: false } },
      ]);
      // Both notifications come before the answer (eca-emacs applies `selection` to the buffer chat/opened made).
      expect(q.messages.indexOf(res)).toBeGreaterThan(q.messages.findLastIndex((m) => m.method === ECA.configUpdated.method));
      expect(res.result.selection).toEqual({ model: 'fake/m1', agent: 'code', variant, variants: ['high', 'low'], trust: false });
    }
  });

  it('an unknown variant on chat/prompt is left out of the request, said in the chat, and the turn still runs', async () => {
    const p = await boot(scratch(tempDir()), scratch(workspace()));
    const body = await prompt(p, { chatId: 'c-1', variant: 'turbo' });
    // As ECA: only extraPayload goes out.
    expect(body.reasoning_effort).toBe('minimal');
    const notice = p.contents('c-1').find((c) => c.role === 'system' && c.content.type === 'text' && /turbo/.test(c.content.text));
    expect(notice?.content.text).toBe('Variant "turbo" is not one of fake/m1\'s (high, low); the request is sent without it.');
    expect(p.text('c-1')).toBe('ok');
    // The server is fine: the next prompt with a real variant carries it.
    expect((await prompt(p, { chatId: 'c-1', variant: 'low' })).reasoning_effort).toBe('low');
  });

  it('a variant that is not an object is refused with its key named; the model’s other variants still work', async () => {
    const p = await boot(scratch(tempDir()), scratch(workspace()), config({ variants: { low: 'fast', high: { reasoning_effort: 'high' } } }));
    const warning = await p.waitFor((m) => m.method === '$/showMessage' && m.params.message.includes('variants'), 'the config warning');
    expect(warning.params.message).toContain('providers.fake.models.m1.variants.low');
    expect(warning.params.message).toContain('expected an object of request fields');
    expect(configUpdates(p)[0].chat).toMatchObject({ variants: ['high'] });
    expect((await prompt(p, { chatId: 'c-1', variant: 'high' })).reasoning_effort).toBe('high');
  });

  it('patchbay doctor lists each model’s variants', async () => {
    const home = scratch(tempDir());
    const run = await runPatchbay(['doctor'], { home, env: { PATCHBAY_CONFIG: JSON.stringify({ ...config(), gateway: { port: 0 } }) }, stdin: null, timeoutMs: 30_000 });
    expect(run.stdout).toContain('Model variants:\n  - fake/m1: high, low\n  - oai/gpt-5.2: high, low, medium, none\n  - ant/claude-opus-4-6: high, low, max, medium\n  - oll/qwen3: quick\n');
  });
});
