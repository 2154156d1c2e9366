/** Shared helpers for the native tool tests: real temp workspaces and a ToolContext. */
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EditorBridge, ToolContext, ToolResult } from '../../src/shapes/tool.js';

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
