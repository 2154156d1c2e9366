/**
 * eca-emacs sends some params in kebab case: `(list :job-id job-id)` in eca-jobs.el
 * (`eca-jobs--kill-at-point`, `eca-jobs--view-output-by-id`) and `:doc-text`/`:doc-version` in
 * eca-completion.el (`eca-completion--find-completion`). ECA's server keywordizes every key, so it
 * reads them as `jobId`/`docText`; patchbay must too (top-level keys only).
 */
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

describe('kebab-case params, as eca-emacs writes them', () => {
  it('jobs/kill with job-id is read as jobId; without any id it is still −32602', async () => {
    const p = track(new EcaProc({ home: tempDir(), config: fakeProviderConfig(llm().url) }));
    await p.initialize(workspace());
    const r = await p.request(ECA.jobsKill, { 'job-id': 'job-404' });
    expect(r.error).toBeUndefined();
    expect(r.result).toEqual({ killed: false });
    // Both spellings: the camelCase one wins, the kebab one is not an unknown extra.
    expect((await p.request(ECA.jobsKill, { jobId: 'job-405', 'job-id': 7 })).result).toEqual({ killed: false });
    const bad = await p.request(ECA.jobsKill, {});
    expect(bad.error?.code).toBe(-32602);
    expect(bad.error?.message).toMatch(/jobId/);
  });
});
