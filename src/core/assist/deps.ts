/**
 * What inline completion and rewrite need from the runtime: the config, the models and their
 * clients, and the retrying stream (a narrow slice of ChatDeps: they keep no chat and no store).
 */
import type { ChatDeps } from '../deps.js';
import type { ModelEntry } from '../../shapes/llm.js';

export type AssistDeps = Pick<ChatDeps, 'config' | 'roots' | 'models' | 'defaultModel' | 'clientFor' | 'stream'>;

/**
 * Local errors of the two features (never serialized; the façade maps them to its wire errors):
 * `noModel` none configured or the configured one is unknown, `superseded` a newer completion
 * replaced this one, `cancelled` the front end withdrew the request, `timeout` the model took too long, `llm` the provider failed.
 */
export class AssistError extends Error {
  constructor(
    readonly code: 'noModel' | 'superseded' | 'cancelled' | 'timeout' | 'llm',
    message: string,
  ) {
    super(message);
    this.name = 'AssistError';
  }
}

/** The configured model for a feature, else the default model (as ECA's rewrite; its completion has a fixed default). */
export function assistModel(deps: AssistDeps, configured: string | undefined, feature: string): ModelEntry {
  if (configured) {
    const entry = deps.models().find((m) => m.id === configured);
    if (!entry) throw new AssistError('noModel', `The ${feature} model "${configured}" is not among the available models (set ${feature}.model to one of them, or remove it to use the default model)`);
    return entry;
  }
  const entry = deps.defaultModel();
  if (!entry) throw new AssistError('noModel', `No model available for ${feature}: configure a provider (providers.<name>) or set ${feature}.model`);
  return entry;
}
