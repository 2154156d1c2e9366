/**
 * The `sandbox` config key: the OS sandbox commands run in (util/sandbox.ts, runtime/sandbox.ts,
 * docs/sandbox.md). A workspace file may narrow it (turn it on, add hidden paths, ask more) but
 * widening it needs trust (held-back.ts).
 */
import { z } from 'zod';

export const sandboxConfigSchema = z.object({
  /** `auto` (the default): on wherever bubblewrap works; `true`: a command that cannot be sandboxed is refused. */
  enabled: z.union([z.boolean(), z.literal('auto')]).optional(),
  /** The host's network inside the sandbox (default false: loopback only, its own). */
  network: z.boolean().optional(),
  /** More folders the command may write, besides the chat's folders, a private /tmp and the memory folders. `~/` is the home folder. */
  writable: z.array(z.string().min(1)).optional(),
  /** More paths the command cannot read, besides the built-in list (`~/.ssh`, `~/.aws`, …). */
  hidden: z.array(z.string().min(1)).optional(),
  /** A command that would only ask runs in the sandbox without asking (default true); `deny` still denies. */
  autoAllow: z.boolean().optional(),
});

export type SandboxConfig = z.infer<typeof sandboxConfigSchema>;
