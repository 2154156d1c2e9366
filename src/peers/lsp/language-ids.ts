/**
 * The one table of LSP language ids (specs/lsp-3.0.md "TextDocumentItem": the identifiers a
 * server expects), by file extension: what a file is opened as (`textDocument/didOpen`), what
 * `languageServers.<name>.languageIds` matches, and what `textDocument/xcontent` answers, so a
 * server is told the same id for a file both ways. An unknown extension is its own id (a
 * config may name it), a file without one `plaintext`.
 */
import { extname } from 'node:path';

const LANGUAGE_IDS: Record<string, string> = {
  ts: 'typescript',
  mts: 'typescript',
  cts: 'typescript',
  tsx: 'typescriptreact',
  js: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  jsx: 'javascriptreact',
  py: 'python',
  pyi: 'python',
  go: 'go',
  rs: 'rust',
  c: 'c',
  h: 'c',
  cc: 'cpp',
  cpp: 'cpp',
  cxx: 'cpp',
  hpp: 'cpp',
  hh: 'cpp',
  hxx: 'cpp',
  m: 'objective-c',
  mm: 'objective-cpp',
  java: 'java',
  rb: 'ruby',
  php: 'php',
  cs: 'csharp',
  lua: 'lua',
  json: 'json',
  css: 'css',
  html: 'html',
  md: 'markdown',
  sh: 'shellscript',
  toml: 'toml',
  yaml: 'yaml',
  yml: 'yaml',
  zig: 'zig',
  swift: 'swift',
  kt: 'kotlin',
};

/** The file's extension without the dot, lower-cased (`ts`). */
export function extensionOf(path: string): string {
  return extname(path).slice(1).toLowerCase();
}

/** The LSP language id of a file (`typescriptreact` for `a.tsx`). */
export function languageIdOf(path: string): string {
  const ext = extensionOf(path);
  return LANGUAGE_IDS[ext] ?? (ext || 'plaintext');
}
