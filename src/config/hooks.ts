/**
 * The `hooks` config key, as ECA's (docs/config/hooks.md "Configuration"): a name → the event it
 * runs on, its shell actions and options. Held back from an untrusted workspace (held-back.ts):
 * a hook runs a command.
 */
import { z } from 'zod';

/** ECA's hook events (docs/config/hooks.md "Hook index"); `prePrompt`/`postPrompt` are ECA's legacy names. */
export const HOOK_TYPES = [
  'sessionStart',
  'sessionEnd',
  'chatStart',
  'chatEnd',
  'chatStatusChanged',
  'subagentStart',
  'preRequest',
  'postRequest',
  'subagentPostRequest',
  'preToolCall',
  'postToolCall',
  'preCompact',
  'postCompact',
] as const;
export type HookType = (typeof HOOK_TYPES)[number];

export const hookActionSchema = z
  .object({
    type: z.literal('shell'),
    /** An inline script, run with `bash -c`. */
    shell: z.string().min(1).optional(),
    /** A script file, run with `bash <file>`; relative to the first workspace folder, `~` allowed. */
    file: z.string().min(1).optional(),
    /** Milliseconds before the action's process group is killed (default: the hook's, else 30000). */
    timeout: z.number().int().positive().optional(),
  })
  .refine((a) => (a.shell === undefined) !== (a.file === undefined), { message: 'a hook action needs exactly one of "shell" and "file"' });
export type HookAction = z.infer<typeof hookActionSchema>;

const argsMatchersSchema = z.record(z.string(), z.array(z.string()));

export const hookSchema = z.object({
  type: z.enum([...HOOK_TYPES, 'prePrompt', 'postPrompt']),
  actions: z.array(hookActionSchema).min(1),
  /** Tool hooks: a regex over `server__tool`, or tool selectors with `argsMatchers`; compact hooks: `manual` or `auto`. */
  matcher: z.union([z.string(), z.record(z.string(), z.object({ argsMatchers: argsMatchersSchema.optional() }).nullable())]).optional(),
  visible: z.boolean().optional(),
  description: z.string().optional(),
  /** postToolCall only: also run when the tool failed. */
  runOnError: z.boolean().optional(),
  timeout: z.number().int().positive().optional(),
});
export type HookConfig = z.infer<typeof hookSchema>;

export const hooksSchema = z.record(z.string(), hookSchema);
