/**
 * The workspace's ToolGate (core/tool-calls/tool-gate.ts): its tools, its config's approval rules, its
 * subagents, its hooks, its sandbox and durable memory's folders, read live, so a call from no chat turn
 * (`patchbay tools check`) is judged by what a chat of this workspace would be judged by.
 */
import { homedir } from 'node:os';
import { ToolGate } from '../core/tool-calls/tool-gate.js';
import type { Workspace } from './workspace.js';

/** `env`: the environment the workspace was opened with (where patchbay's own, protected, folders are). */
export function workspaceGate(ws: Workspace, env: NodeJS.ProcessEnv): ToolGate {
  return new ToolGate({
    tool: (name) => ws.tools.get(name),
    approval: () => ws.config.toolCall.approval,
    disabled: () => ws.config.disabledTools,
    subagents: () => ws.agentDefs.list(),
    toolFolders: (tool) => ws.memory.trustedFolders(tool),
    hooks: ws.hooks,
    homeDir: env.HOME || homedir(),
    env,
    sandbox: (roots) => ws.sandbox.plan(roots),
  });
}
