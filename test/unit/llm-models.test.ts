/**
 * Model resolution: built-in providers from env vars, user providers merged over them,
 * Ollama discovery (and its absence), default choice, cost, and client construction.
 */
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { configSchema, type Config } from '../../src/config/schema.js';
import { listOllamaModels } from '../../src/peers/llm/ollama.js';
import { computeCost, createClient, localModelName, pickDefaultModel, resolveModels } from '../../src/peers/llm/models.js';
import type { ModelEntry } from '../../src/shapes/llm.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { run, textOf } from './llm-helpers.js';

const fake = useFakeLlm();

const config = (c: Record<string, unknown> = {}): Config => configSchema.parse(c);
/** No Ollama unless a test points at the fake (port 1 refuses at once), and no built-in local model. */
const noOllama = { OLLAMA_API_URL: 'http://127.0.0.1:1', PATCHBAY_LOCAL_MODEL: 'off' };
const ids = (models: ModelEntry[]): string[] => models.map((m) => m.id);

describe('resolveModels', () => {
  it('offers nothing without keys or a reachable Ollama', async () => {
    expect(await resolveModels(config(), { ...noOllama })).toEqual([]);
  });

  it('adds the built-in OpenAI and Anthropic models when their keys are in the env', async () => {
    const models = await resolveModels(config(), { ...noOllama, OPENAI_API_KEY: 'sk-openai', ANTHROPIC_API_KEY: 'sk-ant' });
    expect(ids(models)).toEqual(expect.arrayContaining(['openai/gpt-5', 'openai/gpt-5-mini', 'openai/gpt-4.1', 'anthropic/claude-sonnet-4-5', 'anthropic/claude-haiku-4-5']));
    const gpt5 = models.find((m) => m.id === 'openai/gpt-5')!;
    expect(gpt5).toMatchObject({ provider: 'openai', api: 'openai-responses', modelName: 'gpt-5', url: 'https://api.openai.com/v1', key: 'sk-openai' });
    expect(gpt5.cost?.input).toBeGreaterThan(0);
    const sonnet = models.find((m) => m.id === 'anthropic/claude-sonnet-4-5')!;
    expect(sonnet).toMatchObject({ api: 'anthropic', url: 'https://api.anthropic.com', key: 'sk-ant', limit: { context: 200_000 } });
  });

  it('takes OPENAI_API_URL / ANTHROPIC_API_URL overrides', async () => {
    const models = await resolveModels(config(), { ...noOllama, OPENAI_API_KEY: 'a', OPENAI_API_URL: 'http://proxy/v1', ANTHROPIC_API_KEY: 'b', ANTHROPIC_API_URL: 'http://claude-proxy' });
    expect(models.find((m) => m.provider === 'openai')!.url).toBe('http://proxy/v1');
    expect(models.find((m) => m.provider === 'anthropic')!.url).toBe('http://claude-proxy');
  });

  it('merges a user provider over the built-in of the same id', async () => {
    const models = await resolveModels(config({ providers: { openai: { url: 'http://my-openai/v1', models: { 'gpt-5': { modelName: 'gpt-5-2025-08-07' }, 'o9-custom': {} } } } }), {
      ...noOllama,
      OPENAI_API_KEY: 'sk-env',
    });
    const gpt5 = models.find((m) => m.id === 'openai/gpt-5')!;
    expect(gpt5).toMatchObject({ url: 'http://my-openai/v1', modelName: 'gpt-5-2025-08-07', key: 'sk-env', api: 'openai-responses' });
    // the built-in price survives the merge
    expect(gpt5.cost).toBeDefined();
    expect(ids(models)).toContain('openai/o9-custom');
    expect(ids(models)).toContain('openai/gpt-4.1');
  });

  it('reads custom providers: api defaults to openai-chat, key from keyEnv, url required', async () => {
    const models = await resolveModels(
      config({
        providers: {
          vllm: { url: 'http://gpu:8000/v1', keyEnv: 'VLLM_KEY', models: { qwen: { modelName: 'Qwen/Qwen3-32B', limit: { context: 32768, output: 8192 } } } },
          local: { url: 'http://localhost:1234/v1', key: 'inline', models: { m: {} } },
          broken: { models: { x: {} } },
        },
      }),
      { ...noOllama, VLLM_KEY: 'from-env' },
    );
    expect(models.find((m) => m.id === 'vllm/qwen')).toEqual({
      id: 'vllm/qwen',
      provider: 'vllm',
      api: 'openai-chat',
      modelName: 'Qwen/Qwen3-32B',
      url: 'http://gpu:8000/v1',
      key: 'from-env',
      limit: { context: 32768, output: 8192 },
    });
    expect(models.find((m) => m.id === 'local/m')?.key).toBe('inline');
    expect(ids(models).some((id) => id.startsWith('broken/'))).toBe(false);
  });

  it('skips a configured OpenAI provider that has no key', async () => {
    const models = await resolveModels(config({ providers: { openai: { models: { 'gpt-5': {} } } } }), { ...noOllama });
    expect(models).toEqual([]);
  });

  it('discovers Ollama models from /api/tags at OLLAMA_API_URL', async () => {
    fake().models = [{ name: 'qwen3:8b' }, { name: 'llama3.2:latest' }];
    const models = await resolveModels(config(), { OLLAMA_API_URL: fake().url, PATCHBAY_LOCAL_MODEL: 'off' });
    expect(ids(models)).toEqual(['ollama/qwen3:8b', 'ollama/llama3.2:latest']);
    expect(models[0]).toMatchObject({ api: 'ollama', url: fake().url, modelName: 'qwen3:8b' });
    expect(fake().requests).toEqual([expect.objectContaining({ method: 'GET', path: '/api/tags' })]);
  });

  it('gives up on a hanging Ollama after ~1.5 s', async () => {
    // A server that accepts but never answers:
    const net = await import('node:net');
    const sockets: import('node:net').Socket[] = [];
    const hang = net.createServer((s) => sockets.push(s));
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', () => r()));
    const port = (hang.address() as import('node:net').AddressInfo).port;
    const t0 = Date.now();
    const models = await resolveModels(config(), { OLLAMA_API_URL: `http://127.0.0.1:${port}`, ANTHROPIC_API_KEY: 'k', PATCHBAY_LOCAL_MODEL: 'off' });
    const took = Date.now() - t0;
    for (const s of sockets) s.destroy();
    hang.close();
    expect(models.every((m) => m.provider === 'anthropic')).toBe(true);
    expect(models.length).toBeGreaterThan(0);
    expect(took).toBeGreaterThanOrEqual(1400);
    expect(took).toBeLessThan(3000);
  });

  it('offers the built-in local model when nothing else is usable, and only then picks it', async () => {
    const alone = await resolveModels(config(), { OLLAMA_API_URL: 'http://127.0.0.1:1' });
    expect(alone).toEqual([
      {
        id: 'local/qwen2.5-coder-1.5b',
        provider: 'local',
        api: 'local',
        modelName: 'qwen2.5-coder-1.5b',
        url: 'local',
        limit: { context: 8192, output: 2048 },
        // No contextSize: its context starts at 8192 tokens and grows to fit the prompt.
        local: { model: 'hf:Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf' },
      },
    ]);
    expect(pickDefaultModel(alone)?.id).toBe('local/qwen2.5-coder-1.5b');
    const withKey = await resolveModels(config(), { OLLAMA_API_URL: 'http://127.0.0.1:1', OPENAI_API_KEY: 'k' });
    expect(ids(withKey)).toContain('local/qwen2.5-coder-1.5b');
    expect(pickDefaultModel(withKey)?.provider).toBe('openai');
    const custom = await resolveModels(config({ providers: { my: { url: 'http://x/v1', models: { m: {} } } } }), { OLLAMA_API_URL: 'http://127.0.0.1:1' });
    expect(pickDefaultModel(custom)?.id).toBe('my/m');
  });

  it('PATCHBAY_LOCAL_MODEL replaces the default local model, named after its file; config adds local models; one without a file is skipped', async () => {
    const models = await resolveModels(
      config({
        providers: { local: { models: { big: { model: '~/m.gguf', contextSize: 4096, gpuLayers: 'max', sha256: 'a'.repeat(64) }, nofile: {}, tiny: { limit: { context: 8192, output: 16 } } } } },
      }),
      { ...noOllama, PATCHBAY_LOCAL_MODEL: '/tmp/tiny.gguf' },
    );
    expect(models.map((m) => [m.id, m.local, m.limit])).toEqual([
      ['local/tiny', { model: '/tmp/tiny.gguf' }, { context: 8192, output: 16 }],
      // A local model's window is its contextSize (the gauge and the tool set go by it), its reply limit the default's.
      ['local/big', { model: '~/m.gguf', contextSize: 4096, gpuLayers: 'max', sha256: 'a'.repeat(64) }, { context: 4096, output: 2048 }],
    ]);
    // A contextSize wins over the limit.context it would inherit from the default model's settings.
    const sized = await resolveModels(config({ providers: { local: { models: { tiny: { contextSize: 16384 } } } } }), { ...noOllama, PATCHBAY_LOCAL_MODEL: '/tmp/tiny.gguf' });
    expect(sized.map((m) => [m.id, m.local?.contextSize, m.limit])).toEqual([['local/tiny', 16384, { context: 16384, output: 2048 }]]);
    expect(pickDefaultModel(models)?.id).toBe('local/tiny');
    // The built-in one stays available when the config names it.
    const named = await resolveModels(config({ providers: { local: { models: { 'qwen2.5-coder-1.5b': { limit: { context: 8192, output: 8 } } } } } }), {
      ...noOllama,
      PATCHBAY_LOCAL_MODEL: '/tmp/tiny.gguf',
    });
    expect(named.map((m) => [m.id, m.local?.model])).toEqual([
      ['local/tiny', '/tmp/tiny.gguf'],
      ['local/qwen2.5-coder-1.5b', 'hf:Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf'],
    ]);
  });

  it('localModelName: the file name without .gguf, from a path, an URL or an hf: URI', () => {
    expect(localModelName('/models/x.gguf')).toBe('x');
    expect(localModelName('~/Models/Llama-3.2-1B-Q4_K_M.GGUF')).toBe('Llama-3.2-1B-Q4_K_M');
    expect(localModelName('https://host/files/m.gguf?sig=secret')).toBe('m');
    expect(localModelName('hf:user/repo/sub/model-q4.gguf')).toBe('model-q4');
    expect(localModelName('hf:only-a-user')).toBe('only-a-user');
    expect(localModelName('C:\\models\\w in.gguf')).toBe('w-in');
    expect(localModelName('/')).toBe('qwen2.5-coder-1.5b');
  });

  it("a user's own `local` provider with a url (LM Studio) stays theirs, PATCHBAY_LOCAL_MODEL or not", async () => {
    const models = await resolveModels(config({ providers: { local: { url: 'http://localhost:1234/v1', models: { m: {} } } } }), {
      ...noOllama,
      PATCHBAY_LOCAL_MODEL: '/tmp/tiny.gguf',
    });
    expect(models.map((m) => [m.id, m.api, m.url])).toEqual([['local/m', 'openai-chat', 'http://localhost:1234/v1']]);
  });

  it('lists Ollama models directly, and reports HTTP errors', async () => {
    fake().models = [{ name: 'a:1' }];
    expect(await listOllamaModels(fake().url)).toEqual(['a:1']);
    fake().onRequest = () => ({ status: 500, body: { error: 'disk on fire' } });
    await expect(listOllamaModels(fake().url)).rejects.toMatchObject({ name: 'LlmError', status: 500, message: expect.stringContaining('disk on fire') });
  });

  it('image input: the config imageInput wins; else known vision models (Claude, GPT-4.1/5) read images; others do not', async () => {
    const models = await resolveModels(
      config({
        providers: {
          anthropic: { models: { 'claude-haiku-4-5': { imageInput: false } } },
          mine: { api: 'openai-chat', url: 'http://mine/v1', models: { llava: { imageInput: true }, coder: {} } },
        },
      }),
      { ...noOllama, OPENAI_API_KEY: 'a', ANTHROPIC_API_KEY: 'b' },
    );
    const vision = (id: string) => models.find((m) => m.id === id)?.imageInput === true;
    expect(['anthropic/claude-sonnet-4-5', 'openai/gpt-5', 'openai/gpt-4.1', 'mine/llava'].filter(vision)).toHaveLength(4);
    expect(['anthropic/claude-haiku-4-5', 'mine/coder'].some(vision)).toBe(false);
  });
});

describe('pickDefaultModel', () => {
  const entry = (provider: string, name: string): ModelEntry => ({ id: `${provider}/${name}`, provider, api: 'openai-chat', modelName: name, url: 'u' });
  const models = [entry('vllm', 'q'), entry('ollama', 'llama'), entry('openai', 'gpt-5'), entry('anthropic', 'claude-sonnet-4-5')];

  it('uses the configured model by full id or by model name', () => {
    expect(pickDefaultModel(models, 'openai/gpt-5')?.id).toBe('openai/gpt-5');
    expect(pickDefaultModel(models, 'llama')?.id).toBe('ollama/llama');
  });
  it('falls back to anthropic, then openai, then ollama, then the first', () => {
    expect(pickDefaultModel(models, 'nope/x')?.id).toBe('anthropic/claude-sonnet-4-5');
    expect(pickDefaultModel(models.slice(0, 3))?.id).toBe('openai/gpt-5');
    expect(pickDefaultModel(models.slice(0, 2))?.id).toBe('ollama/llama');
    expect(pickDefaultModel(models.slice(0, 1))?.id).toBe('vllm/q');
    expect(pickDefaultModel([])).toBeUndefined();
  });
});

describe('computeCost', () => {
  it('prices fresh input, cache reads and writes, and output per million tokens', () => {
    const entry = { cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } };
    expect(computeCost(entry, { inputTokens: 1_000_000, outputTokens: 1_000_000 })).toBeCloseTo(18);
    // 600k fresh + 300k read + 100k written
    expect(computeCost(entry, { inputTokens: 1_000_000, outputTokens: 0, cacheReadTokens: 300_000, cacheWriteTokens: 100_000 })).toBeCloseTo(0.6 * 3 + 0.3 * 0.3 + 0.1 * 3.75);
    expect(computeCost({ cost: { input: 2, output: 8 } }, { inputTokens: 500_000, outputTokens: 0, cacheReadTokens: 500_000 })).toBeCloseTo(1);
    expect(computeCost({}, { inputTokens: 1, outputTokens: 1 })).toBeUndefined();
  });
});

describe('createClient', () => {
  it('builds the adapter for each api, which then talks to its endpoint', async () => {
    const cases: Array<[ModelEntry['api'], string, string]> = [
      ['openai-chat', `${fake().url}/v1`, '/v1/chat/completions'],
      ['openai-responses', `${fake().url}/v1`, '/v1/responses'],
      ['anthropic', fake().url, '/v1/messages'],
      ['ollama', fake().url, '/api/chat'],
    ];
    for (const [api, url, path] of cases) {
      const client = await createClient({ id: `p/m`, provider: 'p', api, modelName: 'm', url, key: 'k' }, { home: tmpdir() });
      expect(client.api).toBe(api);
      fake().script([{ text: `via ${api}` }]);
      expect(textOf(await run(client, { model: 'm' }))).toBe(`via ${api}`);
      expect(fake().requests.at(-1)?.path).toBe(path);
    }
  });
});
