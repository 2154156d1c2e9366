/**
 * The language-server peer's surface towards patchbay (specs/lsp-3.0.md, and
 * specs/lsp-sourcegraph-extensions.md). patchbay is the LSP client; language features become
 * internal Tools; nothing outside src/peers/lsp knows LSP.
 */
import type { EditorDiagnostic, Tool } from '../../shapes/tool.js';

export type { LanguageServerConfig } from './config.js';

/** What a write's diagnostics came to; `note` is what the tool result tells the model ('' for clean and none). */
export type FileDiagnostics = { kind: 'errors'; errors: string; note: string } | { kind: 'clean' | 'none'; note: '' } | { kind: 'unavailable'; reason: string; note: string };

export interface LspServerInfo {
  name: string;
  command: string;
  args: string[];
  status: 'starting' | 'running' | 'stopped' | 'failed' | 'disabled';
  /** Roots it runs for (one process per root). */
  roots: string[];
  restarts: number;
  lastError?: string;
  /** For a failed built-in: what it needs installed. */
  needs?: string;
  /** Why it is not offered, e.g. found only in a workspace the user has not trusted. */
  note?: string;
}

export interface LspHost {
  /** The LSP-backed tools (diagnostics, definition, references, hover, document/workspace symbols). */
  tools(): Tool[];
  /**
   * After the agent wrote or edited a file: sync it (didOpen/didChange/didSave), wait for fresh
   * diagnostics (bounded by the server's readiness and a cap), and say what they came to: the new
   * errors, clean, or why none could be had.
   */
  afterFileChange(path: string, signal: AbortSignal): Promise<FileDiagnostics>;
  /** A file the agent read or mentioned: opened in the matching server so later queries are warm. */
  fileRead(path: string): void;
  /** A file about to be written: its server is started now, not only when diagnostics are wanted. */
  touch(path: string): void;
  /** Starts the servers for the workspace's languages and waits (bounded) until each runs or fails: for `patchbay doctor`. */
  probe(signal: AbortSignal): Promise<void>;
  /** Diagnostics patchbay's servers have for a file (or all files), for merging with the editor's. */
  diagnostics(path?: string): EditorDiagnostic[];
  servers(): LspServerInfo[];
  dispose(): Promise<void>;
}
