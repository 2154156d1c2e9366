/** The agents a chat can run as: `code` may change things, `plan` only reads (mutating tools are hidden). */
import { z } from 'zod';

export const agentSchema = z.enum(['code', 'plan']);
export type Agent = z.infer<typeof agentSchema>;
export const AGENTS: readonly Agent[] = agentSchema.options;
