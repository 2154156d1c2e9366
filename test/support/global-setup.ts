/**
 * Every temp dir a test run makes (tempDir(), fixtures, the servers it starts) lives under one
 * directory that is removed when the run ends, so no test leaves files behind in /tmp.
 * test/support/temp-root.ts points each test file's TMPDIR at it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    tempRoot: string;
  }
}

export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-test-'));
  project.provide('tempRoot', dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
