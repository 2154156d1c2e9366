/**
 * Which key a provider is called with when a login is stored as well (src/peers/llm/models.ts
 * `findKey`), in ECA's order (`llm-util/provider-api-key`): the config's `key`, then a built-in
 * provider's standard variable (ECA's default config reads it as `key: "${env:OPENAI_API_KEY}"`),
 * then the login, then `keyEnv` (ECA's legacy, after login).
 */
import { describe, expect, it } from 'vitest';
import { findKey, keyOverridingLogin, resolveModels } from '../../src/peers/llm/models.js';

const login = { openai: 'login-openai-0123456789', acme: 'login-acme-0123456789' };

describe('findKey', () => {
  it('a config key wins over a login and the environment', () => {
    expect(findKey('openai', { key: 'cfg-0123456789' }, { OPENAI_API_KEY: 'env-0123456789' }, login)).toEqual({ source: 'config', key: 'cfg-0123456789' });
  });

  it('a built-in provider’s standard variable wins over a login (and is what the login warning names)', () => {
    expect(findKey('openai', undefined, { OPENAI_API_KEY: 'env-0123456789' }, login)).toEqual({ source: 'env', key: 'env-0123456789', envVar: 'OPENAI_API_KEY' });
    expect(keyOverridingLogin('openai', undefined, { OPENAI_API_KEY: 'env-0123456789' })).toMatchObject({ envVar: 'OPENAI_API_KEY' });
    expect(keyOverridingLogin('openai', undefined, {})).toBeUndefined();
  });

  it('a login wins over keyEnv; keyEnv, then the standard variable, without one', () => {
    const env = { MY_KEY: 'mine-0123456789', OPENAI_API_KEY: 'env-0123456789', ACME_KEY: 'acme-0123456789' };
    expect(findKey('openai', { keyEnv: 'MY_KEY' }, env, login)).toEqual({ source: 'login', key: login.openai });
    expect(findKey('acme', { keyEnv: 'ACME_KEY' }, env, login)).toEqual({ source: 'login', key: login.acme });
    expect(keyOverridingLogin('acme', { keyEnv: 'ACME_KEY' }, env)).toBeUndefined();
    expect(findKey('openai', { keyEnv: 'MY_KEY' }, env)).toEqual({ source: 'env', key: 'mine-0123456789', envVar: 'MY_KEY' });
    expect(findKey('openai', { keyEnv: 'UNSET' }, env)).toEqual({ source: 'env', key: 'env-0123456789', envVar: 'OPENAI_API_KEY' });
    expect(findKey('acme', undefined, {}, {})).toBeUndefined();
  });

  it('resolveModels calls a provider with its login key; a built-in needing a key is offered once logged in', async () => {
    const models = await resolveModels(
      { providers: { acme: { api: 'openai-chat', url: 'http://127.0.0.1:9/v1', models: { m1: {} } } } },
      { PATCHBAY_LOCAL_MODEL: 'off' },
      { loginKeys: { acme: login.acme, anthropic: 'login-anthropic-0123456789' } },
    );
    expect(models.find((m) => m.id === 'acme/m1')?.key).toBe(login.acme);
    expect(models.filter((m) => m.provider === 'anthropic').length).toBeGreaterThan(0);
    expect(models.find((m) => m.provider === 'anthropic')?.key).toBe('login-anthropic-0123456789');
    expect(models.some((m) => m.provider === 'openai')).toBe(false);
  });
});
