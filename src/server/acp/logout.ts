/**
 * ACP `logout` (schema v1 `LogoutRequest`, advertised as `agentCapabilities.auth.logout`): ends
 * what `authenticate` picked up, the provider logins `patchbay login` stores
 * (runtime/provider-logins.ts). Every stored login is forgotten, as `patchbay login --logout
 * <provider>` forgets one, so the models they gave go too and the next prompt is answered
 * auth_required when nothing else (a config `key`, an environment variable) gives a model.
 * Keys from the config or the environment are not logins: they stay.
 */
import type { Workspace } from '../../runtime/workspace.js';

/** Forgets every stored provider login; resolves once the models have been re-resolved without them. Answers the providers logged out of. */
export async function logoutAll(ws: Workspace): Promise<string[]> {
  await ws.modelsReady;
  // Logins stored by another process since start-up (the terminal login `authenticate` took) count too.
  await ws.refreshLogins();
  const ids = ws.logins.storedIds();
  // One at a time: each logout rewrites the shared login index under its lock.
  for (const id of ids) await ws.logins.logout(id);
  return ids;
}
