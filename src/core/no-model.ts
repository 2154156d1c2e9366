/** What a user is told when no model is configured (a prompt without one, a façade's login hint). */
export function noModelMessage(): string {
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
