/**
 * Which variants a model has (ECA's built-ins, eca `src/eca/config.clj` `variantsByModel` and
 * `effective-model-variants`), which an editor is offered (`selectable-variant-names`), what a
 * request carries (eca `src/eca/llm_api.clj` `extra-payload-considering-variant`), and the chat's
 * variant column in an older database.
 */
import { afterAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { effectiveVariants } from '../../src/peers/llm/variants.js';
import { requestPayload, validVariant, variantNames } from '../../src/shapes/variants.js';
import { mergePayload } from '../../src/util/merge-payload.js';
import { SqliteStore } from '../../src/store/sqlite.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('built-in and configured variants', () => {
  it('matches ECA’s patterns by name, any separator, for the right API and provider', () => {
    expect(Object.keys(effectiveVariants('anthropic', 'anthropic', 'claude-sonnet-4-6', undefined) ?? {})).toEqual(['low', 'medium', 'high', 'max']);
    expect(effectiveVariants('anthropic', 'anthropic', 'claude-opus-4.7', undefined)?.default).toEqual({ thinking: { type: 'adaptive', display: 'summarized' } });
    expect(effectiveVariants('openai', 'openai-responses', 'gpt-5.4', undefined)?.high).toEqual({ reasoning: { effort: 'high', summary: 'auto' } });
    expect(Object.keys(effectiveVariants('openai', 'openai-responses', 'gpt-5_6-luna', undefined) ?? {})).toContain('max');
    // gpt-5.2 yes, gpt-5.21 or plain gpt-5 no; never for github-copilot; anthropic sets only on the anthropic API.
    expect(effectiveVariants('openai', 'openai-responses', 'gpt-5.21', undefined)).toBeUndefined();
    expect(effectiveVariants('openai', 'openai-responses', 'gpt-5', undefined)).toBeUndefined();
    expect(effectiveVariants('github-copilot', 'openai-chat', 'gpt-5.2', undefined)).toBeUndefined();
    expect(effectiveVariants('proxy', 'openai-chat', 'claude-sonnet-4-6', undefined)).toBeUndefined();
    expect(effectiveVariants('ds', 'openai-chat', 'deepseek-v4-pro', undefined)?.none).toEqual({ thinking: { type: 'disabled' } });
    expect(effectiveVariants('ds', 'anthropic', 'deepseek-v4-pro', undefined)).toBeUndefined();
  });

  it('the config’s variants go over the built-ins by name, and {} removes one', () => {
    const v = effectiveVariants('openai', 'openai-responses', 'gpt-5.2', { high: { reasoning: { effort: 'high' } }, xhigh: {}, fun: { temperature: 1 } });
    expect(v?.high).toEqual({ reasoning: { effort: 'high' } });
    expect(variantNames({ variants: v })).toEqual(['fun', 'high', 'low', 'medium', 'none']);
    expect(effectiveVariants('x', 'openai-chat', 'm', { only: {} })).toBeUndefined();
  });

  it('`default` is applied when none is chosen and never offered', () => {
    const entry = { variants: { default: { a: 1 }, low: { a: 2 } }, extraPayload: { a: 0, b: 1 } };
    expect(variantNames(entry)).toEqual(['low']);
    expect(validVariant(entry, 'default')).toBeNull();
    expect(requestPayload(entry, null)).toEqual({ payload: { a: 1, b: 1 } });
    expect(requestPayload(entry, 'low')).toEqual({ payload: { a: 2, b: 1 } });
    // Unknown: extraPayload only, and said so.
    expect(requestPayload(entry, 'turbo')).toEqual({ payload: { a: 0, b: 1 }, unknownVariant: 'turbo' });
    expect(requestPayload({}, 'constructor')).toEqual({ unknownVariant: 'constructor' });
    expect(requestPayload({}, undefined)).toEqual({});
  });

  it('payloads merge objects key by key and never reach a prototype', () => {
    const body = { model: 'm', reasoning: { summary: 'auto' }, stop: ['x'] };
    const merged = mergePayload(body, JSON.parse('{"reasoning": {"effort": "high"}, "stop": [], "__proto__": {"polluted": true}}') as Record<string, unknown>);
    expect(merged).toEqual({ model: 'm', reasoning: { summary: 'auto', effort: 'high' }, stop: [] });
    expect(body.reasoning).toEqual({ summary: 'auto' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a payload never sets what the request says, can call, which model answers or whether it is kept', () => {
    const body = { model: 'm', input: [{ role: 'user', content: 'hi' }], instructions: 'ours', tools: [{ type: 'function', name: 't' }], store: false, stream: true };
    const extra = { model: 'other', input: [], instructions: 'theirs', tools: [{ type: 'mcp', server_url: 'https://evil.example' }], store: true, stream: false, temperature: 0.1 };
    expect(mergePayload(body, extra)).toEqual({ ...body, temperature: 0.1 });
    // Nor the shape the answer comes back in, a hosted search, or Gemini's cached content; tuning goes.
    const shape = {
      n: 3,
      stream_options: { include_usage: false },
      response_format: { type: 'json_object' },
      modalities: ['audio'],
      audio: {},
      web_search_options: {},
      cached_content: 'c/1',
      tool_config: {},
      text: { verbosity: 'low' },
    };
    expect(mergePayload(body, shape)).toEqual({ ...body, text: { verbosity: 'low' } });
    // Neither through a variant (the `default` one applies with none chosen).
    const entry = { extraPayload: { system: 'x', top_p: 0.5 }, variants: { default: { messages: [], prompt: { id: 'p' }, contents: [], temperature: 0.3 } } };
    expect(requestPayload(entry, null)).toEqual({ payload: { top_p: 0.5, temperature: 0.3 } });
  });
});

describe('the chat’s variant in the store', () => {
  it('a database from before variants gains the column; a variant is kept and cleared', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-variant-'));
    dirs.push(dir);
    const old = new Database(join(dir, 'patchbay.db'));
    old.exec(`CREATE TABLE chats (
      id TEXT PRIMARY KEY, title TEXT, model TEXT, agent TEXT, status TEXT NOT NULL DEFAULT 'idle', owner_pid INTEGER,
      created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
      usage TEXT NOT NULL DEFAULT '{"inputTokens":0,"outputTokens":0,"cost":0}', trust INTEGER NOT NULL DEFAULT 0)`);
    old.prepare('INSERT INTO chats (id, model, created_at, updated_at) VALUES (?, ?, 1, 1)').run('c1', 'fake/m1');
    old.close();

    const s = SqliteStore.open(dir);
    expect(s.getChat('c1')?.variant).toBeUndefined();
    s.updateChat('c1', { variant: 'high' });
    s.close();
    const again = SqliteStore.open(dir);
    expect(again.getChat('c1')).toMatchObject({ model: 'fake/m1', variant: 'high' });
    again.updateChat('c1', { variant: null });
    expect(again.getChat('c1')?.variant).toBeUndefined();
    again.close();
  });
});
