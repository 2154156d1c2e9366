/**
 * What every process patchbay starts for the model or a hook is told about itself, so a shell's
 * history, a wrapper or an audit script can tell an agent's command from a person's. ECA's names
 * (docs/config/tools.md "Spawned command environment"): `ECA_AGENT=1` always (a non-empty value
 * is the contract), `ECA_CHAT_ID` when a chat triggered it; `PATCHBAY_CHAT_ID` is the same id
 * under patchbay's own name.
 */
export function agentEnv(chatId?: string): Record<string, string> {
  return { ECA_AGENT: '1', ...(chatId ? { ECA_CHAT_ID: chatId, PATCHBAY_CHAT_ID: chatId } : {}) };
}

/** `base` (the process's own environment by default) with the agent's variables over it. */
export function withAgentEnv(chatId: string | undefined, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  // A chat id inherited from an outer agent must not pass for this one's.
  const { ECA_CHAT_ID: _eca, PATCHBAY_CHAT_ID: _pb, ...rest } = base;
  return { ...rest, ...agentEnv(chatId) };
}
