/**
 * The language-server peer's surface towards patchbay (specs/lsp-3.0.md, and
 * specs/lsp-sourcegraph-extensions.md). patchbay is the LSP client; language features become
 * internal Tools; nothing outside src/peers/lsp knows LSP.
 */
import type { Tool } from '../../core/tool.js';

export interface LanguageServerConfig {
  command: string;
  args?: string[];
  /** File extensions without the dot (`ts`), or LSP language ids (`typescript`). */
  extensions?: string[];
  languageIds?: string[];
  /** Files that mark a project root (`package.json`, `go.mod`…); default: the workspace folder. */
  rootMarkers?: string[];
  initializationOptions?: unknown;
  env?: Record<string, string>;
  disabled?: boolean;
}

export interface LspServerInfo {
  name: string;
  command: string;
  args: string[];
  status: 'starting' | 'running' | 'stopped' | 'failed' | 'disabled';
  /** Roots it runs for (one process per root). */
  roots: string[];
  restarts: number;
  lastError?: string;
}

export interface LspHost {
  /** The LSP-backed tools (diagnostics, definition, references, hover, document/workspace symbols). */
  tools(): Tool[];
  /**
   * After the agent wrote or edited a file: sync it (didOpen/didChange/didSave), wait (bounded)
   * for fresh diagnostics, and return the new errors as text for the tool result ('' if none or
   * no server handles the file).
   */
  afterFileChange(path: string, signal: AbortSignal): Promise<string>;
  /** A file the agent read: opened in the matching server so later queries are warm. */
  fileRead(path: string): void;
  /** Diagnostics patchbay's servers have for a file (or all files), for merging with the editor's. */
  diagnostics(path?: string): Array<{ uri: string; severity: 'error' | 'warning' | 'info' | 'hint'; message: string; source?: string; range: { start: { line: number; character: number }; end: { line: number; character: number } }; code?: string }>;
  servers(): LspServerInfo[];
  dispose(): Promise<void>;
}
