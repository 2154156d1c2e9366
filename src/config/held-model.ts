/**
 * What holds a chat's model back: the untrusted workspace files whose held-back settings set up
 * a provider (its url, key, login, a model file or name). A chat with no model to use says so in
 * these terms, not as "No LLM is configured": the provider is there, waiting for trust, and
 * eca-webview and other clients never show the `$/showMessage` that tells it at start-up.
 */
import { heldBack, type LoadConfigResult } from './load.js';
import { heldBackMessage } from './held-back.js';

/** One message per file that holds back provider settings, naming them and how to trust the folder. */
export function heldModelMessages(r: Pick<LoadConfigResult, 'workspaces'>): string[] {
  return heldBack(r).flatMap((w) => {
    const settings = w.settings.filter((s) => s.path[0] === 'providers');
    return settings.length ? [heldBackMessage({ ...w, settings })] : [];
  });
}
