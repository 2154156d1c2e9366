/**
 * The `openctx` config key: which OpenCtx providers patchbay uses as a client.
 * A provider URI is an http(s) endpoint, a JS module path / `file:` URL, or a package name
 * resolvable from the workspace root. `true` enables it with no settings, `false` disables it,
 * an object enables it and is sent as the provider's `settings` on every call.
 */
import { z } from 'zod';

export const DEFAULT_OPENCTX_TIMEOUT_MS = 5000;

export const providerSettingsSchema = z.union([z.boolean(), z.record(z.string(), z.unknown())]);

export const openCtxConfigSchema = z.object({
  providers: z.record(z.string().min(1, 'provider URI must not be empty'), providerSettingsSchema).default({}),
  /** Provider URIs or provider names (meta `name`) asked `items({message})` at each prompt. */
  autoInclude: z.array(z.string().min(1)).default([]),
  /** Deadline for one provider call (meta included), in milliseconds. */
  timeoutMs: z.number().int().positive().default(DEFAULT_OPENCTX_TIMEOUT_MS),
});

export type OpenCtxConfig = z.infer<typeof openCtxConfigSchema>;
/** What callers may write before defaults apply. */
export type OpenCtxConfigInput = z.input<typeof openCtxConfigSchema>;
export type ProviderSettings = Record<string, unknown>;

/** Enabled providers in config order, with the settings object each receives. */
export function enabledProviders(config: OpenCtxConfig): Array<{ uri: string; settings: ProviderSettings }> {
  const out: Array<{ uri: string; settings: ProviderSettings }> = [];
  for (const [uri, value] of Object.entries(config.providers)) {
    if (value === false) continue;
    out.push({ uri, settings: value === true ? {} : value });
  }
  return out;
}
