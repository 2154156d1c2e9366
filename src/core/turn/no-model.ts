/**
 * What a user is told when no model is configured (a prompt without one, a façade's login hint).
 * `heldModels`: the held-back messages of the untrusted workspace files whose provider settings
 * would give one (config/held-model.ts); then the text says that, and how to trust the folder,
 * instead of asking for a configuration the folder already has.
 */
export function noModelMessage(heldModels: readonly string[] = []): string {
  if (heldModels.length) {
    return ['No model can be used yet: the provider this workspace sets up is held back until you trust its folder.', ...heldModels, 'Once it is trusted, send the prompt again.'].join('\n');
  }
  return [
    'No LLM is configured. Set one of:',
    '  OPENAI_API_KEY=…    (OpenAI)',
    '  ANTHROPIC_API_KEY=… (Anthropic)',
    '  OLLAMA_API_URL=http://localhost:11434 (a running Ollama)',
    '  PATCHBAY_LOCAL_MODEL=hf:…|https://…|/path/model.gguf (a model run by patchbay itself; unset = the default one)',
    'or add a provider to ~/.config/patchbay/config.json, e.g.',
    '  {"providers": {"my": {"api": "openai-chat", "url": "https://host/v1", "key": "${env:MY_KEY}", "models": {"my-model": {}}}}, "defaultModel": "my/my-model"}',
  ].join('\n');
}
