/**
 * Model variants as ECA has them (eca docs/config/variants.md): named payload presets of a
 * model, e.g. reasoning effort `low`/`medium`/`high`, picked per chat in the editor.
 * `ModelEntry.variants` holds the effective ones (built-ins with the config's over them,
 * `peers/llm/variants.ts`); this file answers what a front end shows and what a request carries.
 */
import type { ModelEntry } from './llm.js';
import { mergePayload } from '../util/merge-payload.js';

/**
 * ECA applies a variant named `default` when none is selected and never offers it
 * (config.clj `selectable-variant-names`).
 */
const DEFAULT_VARIANT = 'default';

/** The names an editor offers for a model, sorted as ECA sorts them; `[]` when it has none. */
export function variantNames(entry: Pick<ModelEntry, 'variants'> | undefined): string[] {
  return Object.keys(entry?.variants ?? {})
    .filter((n) => n !== DEFAULT_VARIANT)
    .sort();
}

/** `variant` when the model offers it, else null (ECA's `valid?` in `notify-selected-model-changed!`). */
export function validVariant(entry: Pick<ModelEntry, 'variants'> | undefined, variant: string | null | undefined): string | null {
  return variant && variantNames(entry).includes(variant) ? variant : null;
}

export interface RequestPayload {
  /** What to merge over the wire body; undefined when nothing is. */
  payload?: Record<string, unknown>;
  /** Set when the chat's variant is not one of the model's: it is left out (as ECA does). */
  unknownVariant?: string;
}

/**
 * The extra fields of a request: `extraPayload` with the variant's payload over it (ECA
 * llm_api.clj `extra-payload-considering-variant`: variant values win on clashing keys). No
 * variant: the model's `default` one, if any. An unknown variant adds nothing.
 */
export function requestPayload(entry: Pick<ModelEntry, 'variants' | 'extraPayload'>, variant: string | null | undefined): RequestPayload {
  const variants = entry.variants ?? {};
  const chosen = variant ? (Object.hasOwn(variants, variant) ? variants[variant] : undefined) : variants[DEFAULT_VARIANT];
  // Over an empty body, so extraPayload's fields pass mergePayload's refusals as the variant's do.
  const merged = mergePayload(mergePayload({}, entry.extraPayload), chosen);
  return {
    ...(Object.keys(merged).length ? { payload: merged } : {}),
    ...(variant && !chosen ? { unknownVariant: variant } : {}),
  };
}
