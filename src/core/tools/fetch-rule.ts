/**
 * `fetch_rule` (ECA src/eca/features/tools/fetch_rule.clj): the full body of a path-scoped rule,
 * by its exact id (the catalog in the system prompt) and the absolute path the model will work
 * on, validated against the rule's globs. Fetched once per chat: a second fetch says so.
 */
import { z } from 'zod';
import { defineNativeTool } from '../../shapes/define-tool.js';
import type { Tool } from '../../shapes/tool.js';
import { textResult } from '../../shapes/tool.js';
import { chatRuleState, matchRule, type Rule } from '../agent-files/rules.js';
import { fetchedText, mismatchText } from '../agent-files/rules-text.js';
import type { StoredMessage } from '../chat/stored-message.js';

export const fetchRuleSchema = z.object({
  id: z.string().min(1).describe('The exact rule id from the path-scoped rules catalog'),
  path: z.string().min(1).describe('The exact absolute file or directory path you plan to work with'),
});

export interface FetchRuleLookup {
  /** The path-scoped rules that apply to the chat (its agent and model, as its last request saw). */
  pathScoped(chatId: string): Rule[];
  stored(chatId: string): readonly StoredMessage[];
}

const description = `Fetch the full content of a path-scoped rule by its exact id and the exact absolute target path you plan to work with.
Path-scoped rules are listed in the system prompt with their id, name, scope, workspace root when relevant, path patterns, and enforce attribute.
Each rule has an enforce attribute that determines when you must fetch it: \`modify\` (default) means fetch before editing a matching file; \`read\` means fetch before reading; \`read,modify\` means both. Copy the exact rule id from the catalog, pass the exact absolute target path, and call this tool to validate the match and get the rule's full content. If the tool reports a mismatch, choose a different rule or correct the path. Fetch each matching rule only once per chat.`;

export function fetchRuleTool(lookup: FetchRuleLookup): Tool {
  return defineNativeTool({
    name: 'fetch_rule',
    description,
    schema: fetchRuleSchema,
    readOnly: true,
    mutates: false,
    // It reads no file at `path`: the path is only matched against the rule's globs.
    pathArgs: [],
    summary: (a) => (a.id ? `Fetching rule '${a.id}'` : 'Fetching rule'),
    async run(args, ctx) {
      const rule = lookup.pathScoped(ctx.chatId).find((r) => r.id === args.id);
      if (!rule) return textResult(`Rule id '${args.id}' not found in the current path-scoped rules catalog. Use the exact id from the catalog or /rules command.`, true);
      const m = matchRule(rule, ctx.roots, args.path);
      if (!m.match) return textResult(mismatchText(rule, m), true);
      if (chatRuleState(lookup.stored(ctx.chatId), ctx.roots).fetched.has(rule.id)) {
        return textResult(`**${rule.name}** — already loaded in this chat, reuse the previously fetched content.`);
      }
      return textResult(fetchedText(rule, m));
    },
  });
}
