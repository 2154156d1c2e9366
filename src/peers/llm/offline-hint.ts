/**
 * What to do when the local model cannot be downloaded (no network, DNS failure, a blocked
 * host): on a first run with no key and no provider this is the first thing a user sees, so it
 * lists every other way to get a model, not only "try again".
 */
import { userConfigPath } from '../../util/locations.js';

export function offlineHint(opts: { model: string | undefined; home: string; env?: NodeJS.ProcessEnv }): string {
  const env = opts.env ?? process.env;
  return [
    'Without this download, patchbay can use any one of these:',
    '  - an API key: set OPENAI_API_KEY or ANTHROPIC_API_KEY',
    '  - a running Ollama: set OLLAMA_API_URL (e.g. http://localhost:11434)',
    `  - a provider in ${userConfigPath(env)} (see "providers" in docs/models.md)`,
    '  - a GGUF model file you already have: PATCHBAY_LOCAL_MODEL=/path/to/model.gguf',
    `  - once online: \`patchbay models pull${opts.model ? ` ${opts.model}` : ''}\` downloads the model to ${opts.home}/models (HF_ENDPOINT selects a Hugging Face mirror)`,
  ].join('\n');
}
