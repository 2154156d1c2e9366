/** The LSP peer: language servers as patchbay Tools and post-edit diagnostics. */
export { LspHostImpl, type LspHostOptions } from './host.js';
export { extensionOf, languageIdOf } from './language-ids.js';
export type { FileDiagnostics, LanguageServerConfig, LspHost, LspServerInfo } from './types.js';
export { BUILTIN_SERVERS, resolveServers, type ResolvedServers } from './config.js';
export type { RestartPolicy } from './server.js';
export { columnToUtf16, utf16ToColumn, symbolCharacter } from './documents.js';
