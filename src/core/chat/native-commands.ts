/** patchbay's own /commands. */
import type { Command, CommandContext } from './commands.js';
import { compactChat } from '../turn/compaction.js';
import { chatSystemPrompt, formatCost } from '../turn/turn.js';
import { llmName } from '../tool-calls/tool-registry.js';
import { unpin } from '../turn/pinned-prompt.js';
import { errorMessage } from '../../util/log.js';
import { stoppedText } from '../hooks/effects.js';

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
        // As ECA's /costs: the cache lines only once the provider reported cache use.
        ...(chat.usage.cacheWriteTokens ? [`Input cache write tokens: ${chat.usage.cacheWriteTokens}`] : []),
        ...(chat.usage.cacheReadTokens ? [`Input cache read tokens: ${chat.usage.cacheReadTokens}`] : []),
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
      const entry = deps.models().find((m) => m.id === chat.model) ?? deps.defaultModel();
      const tools = deps.tools.visible({ agent: chat.agent, approval: config.toolCall.approval, disabled: config.disabledTools, chatId: chat.id, contextWindow: entry?.limit?.context });
      const model = entry?.id;
      const system = chatSystemPrompt(chat, chat.agent, model, tools, deps, { autoSync: config.chat.autoSyncSystemPrompt, notice: () => {}, peek: true }).text;
      return { kind: 'show', text: `System prompt:\n${system}\n\nTools:\n${tools.map((t) => `- ${llmName(t)}: ${t.description.split('\n')[0]}`).join('\n')}` };
    }),
    // ECA commands.clj "sync-system-prompt".
    cmd('sync-system-prompt', 'Re-sync the system prompt (AGENTS.md, rules, skills) on the next message, invalidating the chat prompt cache.', async (_a, { chat }) => {
      unpin(chat);
      return { kind: 'show', text: 'System prompt will be re-synced on the next message (prompt cache invalidated).' };
    }),
    cmd('trust', "Trust this folder's .patchbay/config.json: apply the settings held back from it", async () => ({ kind: 'show', text: await hooks.trust() })),
    cmd('repo-map-show', 'Show the repo map the model receives with the repoMap context', async (_a, { signal }) => ({
      kind: 'show',
      text: await hooks.repoMap(signal),
    })),
  ];
}

/** `/compact`: the chat's model summarises the conversation; the summary replaces it for the model. */
async function compact(instructions: string, { chat, deps, signal }: CommandContext): Promise<string> {
  try {
    const r = await compactChat(chat, deps, { trigger: 'manual', instructions, signal });
    const stop = r.stop ? `\n\n${stoppedText(r.stop)}` : '';
    return r.ok ? `Chat compacted. Summary:\n${r.summary}${stop}` : r.reason;
  } catch (e) {
    // compactChat throws only when stopped.
    return `Compacting stopped: ${errorMessage(e)}`;
  }
}
