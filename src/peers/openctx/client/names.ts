/**
 * A name for a provider whose `meta` has none (the field is optional in the spec). Mentions are
 * labelled `openctx:<name>` and `autoInclude` may name providers, so a nameless provider gets a
 * short one from its config key instead of answering to nothing but its full URI or path.
 */
import { basename, dirname } from 'node:path';

/** `https://host/a/notes` → `notes`; `./tools/my-provider.mjs` → `my-provider`; a package → its name. */
export function fallbackName(uri: string): string {
  if (/^https?:\/\//i.test(uri)) {
    try {
      const url = new URL(uri);
      const last = url.pathname.split('/').filter(Boolean).at(-1);
      return last ? decodeURIComponent(last) : url.hostname;
    } catch {
      return uri;
    }
  }
  const isPath = /^(file:|\.{1,2}[\\/]|[\\/])/i.test(uri) || /^[a-z]:[\\/]/i.test(uri);
  if (!isPath) return uri;
  const path = uri.replace(/^file:(\/\/)?/i, '');
  const stem = basename(path).replace(/\.(m|c)?[jt]s$/i, '');
  // `.../my-provider/index.js` names the folder, not "index".
  return stem === 'index' ? basename(dirname(path)) || stem : stem;
}
