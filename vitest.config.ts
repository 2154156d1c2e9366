import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Test files that keep the CPU busy by themselves (the local model's inference, the MCP
 * conformance suite's scripted servers, tsserver, ESLint over src/, a type check of a project):
 * they run first, as their own group with one file per core, so that they neither starve each
 * other nor make the deadlines of the waiting e2e tests around them fire. A new file that runs a
 * heavy program goes here.
 */
const cpuBound = [
  'test/e2e/local.test.ts',
  'test/unit/local-llm.test.ts',
  'test/unit/local-kv-cache.test.ts',
  'test/e2e/mcp-conformance.test.ts',
  'test/e2e/lsp.test.ts',
  'test/e2e/lsp-readiness.test.ts',
  'test/unit/lsp-typescript.test.ts',
  'test/unit/lint-layers.test.ts',
  'test/e2e/provider-package.test.ts',
  'test/e2e/pack-install.test.ts',
];

const cores = availableParallelism();
/**
 * The rest: most of a file's time is spent waiting for the child processes it drives (the built
 * bin/patchbay, fake servers, a pty) and their I/O, so more files than cores run at once; with
 * one worker per core minus one (vitest's default: 1 on 2 cores) the suite ran file after file.
 * Every test uses its own temp dirs and port-0 listeners, so files do not meet.
 * PATCHBAY_TEST_WORKERS overrides the number (e.g. 1 to run one file at a time).
 */
const workers = Number(process.env.PATCHBAY_TEST_WORKERS) || Math.max(3, cores + 1);

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/temp-root.ts'],
    projects: [
      {
        extends: true,
        test: { name: 'cpu-bound', include: cpuBound, maxWorkers: Math.min(cores, workers), sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'tests', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...cpuBound], maxWorkers: workers, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
