/** patchbay's own /commands. */
import type { Command, CommandContext } from './commands.js';
import { toLlmMessages } from './messages.js';
import { chatSystemPrompt, formatCost } from './turn.js';
import { llmName } from './tool-registry.js';
import { errorMessage } from '../util/log.js';
import { afterCompact, beforeCompact } from './hooks/compact-hooks.js';
import { stoppedText } from './hooks/effects.js';

export interface NativeCommandHooks {
  doctor(): Promise<string>;
  repoMap(signal: AbortSignal): Promise<string>;
  /** Trust this workspace's held-back config (src/server/session-trust.ts). */
  trust(): Promise<string>;
}

export function nativeCommands(hooks: NativeCommandHooks): Command[] {
  const cmd = (name: string, description: string, run: Command['run'], args: Command['arguments'] = []): Command => ({
    name,
    description,
    type: 'native',
    arguments: args,
    run,
  });
  return [
    cmd('costs', 'Show tokens used and costs of this chat', async (_a, { chat }) => ({
      kind: 'show',
      text: [
        `Input tokens: ${chat.usage.inputTokens}`,
        `Output tokens: ${chat.usage.outputTokens}`,
        `Total tokens: ${chat.usage.inputTokens + chat.usage.outputTokens}`,
        `Cost: ${chat.usage.cost > 0 ? `$${formatCost(chat.usage.cost)}` : 'unknown (no prices configured for this model) or zero'}`,
      ].join('\n'),
    })),
    cmd('compact', 'Summarize the chat so far to free context; optional extra instructions', async (args, ctx) => ({ kind: 'show', text: await compact(args.join(' '), ctx) }), [
      { name: 'instructions', description: 'What the summary should keep', required: false },
    ]),
    cmd('hooks', 'List active hooks grouped by type.', async (_a, { deps }) => ({
      kind: 'show',
      text: deps.hooks?.listText() ?? 'No hooks configured. Add hooks to your config under the `hooks` key.',
    })),
    cmd('doctor', 'Check models, config, tool servers and storage', async () => ({ kind: 'show', text: await hooks.doctor() })),
    cmd('prompt-show', 'Show the system prompt and tools the model receives', async (_a, { chat, deps }) => {
      const config = deps.config();
      const tools = deps.tools.visible({ agent: chat.agent, approval: config.toolCall.approval, disabled: config.disabledTools, chatId: chat.id });
      const model = (deps.models().find((m) => m.id === chat.model) ?? deps.defaultModel())?.id;
      const system = chatSystemPrompt(chat, chat.agent, model, tools, deps).text;
      return { kind: 'show', text: `System prompt:\n${system}\n\nTools:\n${tools.map((t) => `- ${llmName(t)}: ${t.description.split('\n')[0]}`).join('\n')}` };
    }),
    cmd('trust', "Trust this folder's .patchbay/config.json: apply the settings held back from it", async () => ({ kind: 'show', text: await hooks.trust() })),
    cmd('repo-map-show', 'Show the repo map the model receives with the repoMap context', async (_a, { signal }) => ({
      kind: 'show',
      text: await hooks.repoMap(signal),
    })),
  ];
}

/** Replaces the LLM history with a summary written by the chat's model. */
async function compact(extra: string, { chat, deps, signal }: CommandContext): Promise<string> {
  const entry = deps.models().find((m) => m.id === chat.model) ?? deps.defaultModel();
  if (!entry) return 'No model is configured, so the chat cannot be summarized.';
  const history = toLlmMessages(chat.stored);
  if (!history.length) return 'Nothing to compact yet.';
  const veto = await beforeCompact(deps, chat, 'manual', extra, signal);
  if (veto) return veto.text;
  try {
    const client = await deps.clientFor(entry);
    let summary = '';
    const config = deps.config();
    for await (const ev of deps.stream(
      client,
      {
        model: entry.modelName,
        system: 'You summarize coding conversations so they can continue with less context.',
        messages: [
          ...history,
          {
            role: 'user',
            content: `Summarize this conversation for continuing it: the goal, decisions, files touched and their state, and open tasks. ${extra}`.trim(),
          },
        ],
        tools: [],
        signal,
      },
      { maxRetries: config.chat.maxRetries, stallMs: config.chat.stallTimeoutSeconds * 1000, onRetry: () => {} },
    )) {
      if (ev.type === 'text') summary += ev.text;
    }
    if (!summary.trim()) return 'The model returned an empty summary; the chat was left as it was.';
    const msg = { role: 'system' as const, kind: 'summary' as const, text: summary.trim() };
    chat.stored.push(msg);
    const seq = deps.store.appendMessage(chat.id, msg);
    // postCompact's additionalContext stays with the summary (ECA appends it after the compact marker).
    const after = await afterCompact(deps, chat, 'manual', msg.text, signal);
    if (after.append) ((msg.text += after.append), deps.store.replaceMessage(chat.id, seq, msg));
    return `Chat compacted. Summary:\n${summary.trim()}${after.stop ? `\n\n${stoppedText(after.stop)}` : ''}`;
  } catch (e) {
    return `Compacting failed: ${errorMessage(e)}`;
  }
}
