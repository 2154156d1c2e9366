/**
 * Refuses, in one config layer, the request fields no `extraPayload` or variant may set
 * (util/merge-payload.ts REFUSED_PAYLOAD_KEYS): each payload naming any is reported once, with
 * the keys, and the rest of it still applies. This holds for every layer, the user's own too:
 * a payload is for tuning a request (reasoning effort, temperature), never for rewriting it.
 */
import { refusedPayloadKeys } from '../util/merge-payload.js';
import type { ConfigError } from './load.js';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Deletes the refused fields from `layer`'s payloads (in place) and reports each payload that had any. */
export function refuseRequestFields(layer: Obj, source: string, errors: ConfigError[]): void {
  const providers = isObj(layer.providers) ? layer.providers : {};
  for (const [provider, config] of Object.entries(providers)) {
    const models = isObj(config) && isObj(config.models) ? config.models : {};
    for (const [model, entry] of Object.entries(models)) {
      if (!isObj(entry)) continue;
      const at = `providers.${provider}.models.${model}`;
      if (isObj(entry.extraPayload)) refuse(entry.extraPayload, `${at}.extraPayload`, source, errors);
      const variants = isObj(entry.variants) ? entry.variants : {};
      for (const [name, payload] of Object.entries(variants)) if (isObj(payload)) refuse(payload, `${at}.variants.${name}`, source, errors);
    }
  }
}

function refuse(payload: Obj, key: string, source: string, errors: ConfigError[]): void {
  const refused = refusedPayloadKeys(payload);
  if (!refused.length) return;
  for (const k of refused) delete payload[k];
  const names = refused.map((k) => JSON.stringify(k)).join(', ');
  errors.push({
    source,
    key,
    message: `${names} ${refused.length > 1 ? 'are' : 'is'} not allowed: patchbay builds a request's content, tools, model and storage itself, so a payload may only tune it (e.g. "reasoning_effort", "temperature"). Left out; the rest of it applies.`,
  });
}
