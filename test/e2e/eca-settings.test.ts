/**
 * The settings panels eca-emacs opens (`eca-settings`): `providers/list` as eca-emacs
 * `eca-providers--fetch-and-render` (eca-providers.el) asks for it and ECA's
 * `src/eca/features/providers.clj` `build-provider-status` answers it, and the background-jobs
 * methods as eca-emacs `eca-jobs--create-settings-buffer` / `eca-jobs--kill-at-point` /
 * `eca-jobs--view-output` (eca-jobs.el) call them and ECA's `src/eca/handlers.clj` `jobs-list`,
 * `jobs-kill`, `jobs-read-output` answer for jobs it does not have. Seen in a real eca-emacs run:
 * both answered −32601 and the Providers tab said "Failed to load providers".
 */
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

async function boot() {
  const url = llm().url;
  const base = fakeProviderConfig(url);
  const config = {
    ...base,
    providers: {
      ...(base.providers as Record<string, unknown>),
      // A key from the environment, one with no key at all, and one on this machine (Ollama's wire).
      fromenv: { api: 'openai-chat', url: `${url}/v1`, keyEnv: 'PB_SETTINGS_TEST_KEY', models: { e1: {} } },
      nokey: { api: 'openai-chat', url: `${url}/v1`, models: { n1: {} } },
      here: { api: 'ollama', url, models: { 'llama3.2:latest': {} } },
    },
  };
  const p = track(new EcaProc({ home: tempDir(), config, env: { PB_SETTINGS_TEST_KEY: 'env-secret' } }));
  await p.initialize(workspace());
  return p;
}

describe('settings panels: providers/list and jobs/*', () => {
  it('providers/list: each provider with how its key was found and its models; no key is sent', async () => {
    const p = await boot();
    const res = await p.request(ECA.providersList, {});
    expect(res.error).toBeUndefined();
    const byId = Object.fromEntries((res.result.providers as Array<{ id: string }>).map((x) => [x.id, x as any]));
    expect(byId.fake).toEqual({
      id: 'fake',
      configured: true,
      auth: { status: 'authenticated', type: 'api-key', source: 'config' },
      // Every provider that needs a key can take one from the panel (ECA's `login.methods`).
      login: { methods: [{ key: 'api-key', label: 'Enter API key' }] },
      models: [{ id: 'm1', capabilities: { reason: false, vision: false, tools: true, webSearch: false }, cost: { input: 1, output: 2 } }],
      settings: { api: 'openai-chat', url: `${llm().url}/v1` },
    });
    expect(byId.fromenv).toMatchObject({ configured: true, auth: { status: 'authenticated', source: 'env', envVar: 'PB_SETTINGS_TEST_KEY' }, models: [{ id: 'e1' }] });
    expect(byId.nokey).toMatchObject({ configured: true, auth: { status: 'unauthenticated' } });
    expect(byId.here).toMatchObject({ configured: true, auth: { status: 'local' }, models: [{ id: 'llama3.2:latest' }] });
    expect(byId.here.login).toBeUndefined();
    // The built-in providers are listed too, configured or not.
    expect(byId.anthropic).toMatchObject({ label: 'Anthropic', configured: false, auth: { status: 'unauthenticated' }, models: [] });
    const wire = JSON.stringify(res);
    expect(wire).not.toContain('test-key');
    expect(wire).not.toContain('env-secret');
  });

  it('jobs/list is empty, jobs/kill kills nothing, jobs/readOutput of an unknown job is ECA’s empty answer; a job id that is not a string is −32602', async () => {
    const p = await boot();
    expect((await p.request(ECA.jobsList, {})).result).toEqual({ jobs: [] });
    expect((await p.request(ECA.jobsKill, { jobId: 'job-1' })).result).toEqual({ killed: false });
    expect((await p.request(ECA.jobsReadOutput, { jobId: 'job-1' })).result).toEqual({ lines: [], status: null, exitCode: null });
    const bad = await p.request(ECA.jobsKill, { jobId: 7 });
    expect(bad.error).toMatchObject({ code: -32602 });
    expect(bad.error?.message).toContain('jobId');
    // Still serving.
    expect((await p.request(ECA.jobsList, {})).result).toEqual({ jobs: [] });
  });
});
