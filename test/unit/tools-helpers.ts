/** Shared helpers for the native tool tests: real temp workspaces and a ToolContext. */
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EditorBridge, ToolContext, ToolResult } from '../../src/shapes/tool.js';
import { afterEach } from 'vitest';

export async function tempDir(prefix = 'patchbay-tools-'): Promise<string> {
  // realpath: on macOS tmpdir() is itself a symlink.
  return realpath(await mkdtemp(join(tmpdir(), prefix)));
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/** `confined: false` stands for a call the user approved although it touches paths outside the roots. */
export function context(roots: string[], opts: { signal?: AbortSignal; editor?: EditorBridge; confined?: boolean } = {}): ToolContext {
  return { signal: opts.signal ?? new AbortController().signal, roots, chatId: 'test-chat', editor: opts.editor ?? {}, confined: opts.confined };
}

export function text(r: ToolResult): string {
  return r.outputs.map((o) => (o.type === 'text' ? o.text : `[image ${o.mimeType}]`)).join('');
}

/**
 * Temp dirs and processes a jobs test made, removed and SIGKILLed after each test:
 * `const { dirs, pids } = useJobTestCleanup()`, then push onto them.
 */
export function useJobTestCleanup(): { dirs: string[]; pids: number[] } {
  const dirs: string[] = [];
  const pids: number[] = [];
  afterEach(async () => {
    for (const pid of pids.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone, as it should be */
      }
    }
    await Promise.all(dirs.splice(0).map(removeDir));
  });
  return { dirs, pids };
}
