/**
 * The write guidance for memory, in the stable part of the system prompt (it does not change
 * during a chat, so it rides the cached prefix; only the index changes per turn). patchbay's own
 * wording of the policy ECA documents (docs/config/memory.md "Write policy", "What NOT to save").
 */
import type { MemoryDir } from './dirs.js';
import type { WriteMode } from './settings.js';

export const GUIDANCE_HEADING = '## Memory write guidance';

export function memoryGuidance(mode: WriteMode, dirs: readonly MemoryDir[]): string {
  const permission =
    mode === 'agent'
      ? 'You may save well-supported technical findings without being asked: a failure, the conditions that caused it, and the fix you verified.'
      : 'Create, change or delete memories only when the user asks you to, technical findings included.';
  return [
    GUIDANCE_HEADING,
    '',
    'Memory is a small store of Markdown files that outlives this chat. The index of what it holds comes with each user message, under "## Memory".',
    '',
    '### When to write',
    permission,
    'What the user tells you applies to this chat only, unless they clearly ask you to remember it for later chats ("remember that…", "from now on, in every chat…"); a repeated instruction is not such a request. When unsure, do not save, and do not keep asking.',
    'For a saved preference, quote the user and keep the scope they gave.',
    '',
    '### What to keep, and what not',
    'Keep what took effort to learn and will help later: failures and their fixes, dead ends, the results of long searches, with their conditions and evidence. One failure is not a rule.',
    'Do not save what you would see anyway while working (the code, its docs), summaries of this chat, tasks for later, copied code or logs, or rules already in AGENTS.md or the project rules. Never save secrets or credentials.',
    'Use the project folder by default; the global folder only for knowledge that has nothing to do with this codebase. Knowledge the whole team needs belongs in AGENTS.md or the project rules, not here. Never commit memory files to git.',
    '',
    '### File format',
    'One topic per file, named after the topic (not a date). The file starts with YAML front-matter:',
    '- `name`: a few words (at most 5);',
    '- `description`: one line (at most 120 characters) saying when the memory applies: it is what the index shows;',
    '- `type`: solution, decision, gotcha, procedure, fact, preference or metric;',
    '- `tags` (optional): at most 3 lowercase words, reusing the spellings in "Tags in use:".',
    'A file without a non-blank `name` and `description` is refused. Keep the body short (about 20 lines), with exact errors, paths and commands; refer to files rather than copying them. Keep any fields or types you find in an existing file.',
    '',
    '```markdown',
    '---',
    'name: Alpine localhost is IPv6',
    'description: Tests fail in Alpine CI with localhost; use 127.0.0.1',
    'type: gotcha',
    'tags: ci, docker',
    '---',
    'Symptom: curl to localhost fails in the Alpine CI image.',
    'Cause: localhost resolves to ::1 there; the test server listens on IPv4 only.',
    'Fix: use 127.0.0.1 in test URLs.',
    '```',
    '',
    '### Using memory',
    'Memories are notes, not truths: check a fact against the current code before you rely on it (the code wins; a stated preference still holds). When writing is allowed, update the existing file on a topic instead of adding another, and merge or remove what is stale.',
    '',
    'Memory folders (they exist: use your file tools on them directly, no mkdir or listing first):',
    ...dirs.map((d) => `- ${d.dir} (${d.label}) — ${d.tier === 'global' ? 'global: yours, every project' : 'this project: yours, the default place to write'}`),
  ].join('\n');
}
