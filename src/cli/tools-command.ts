/**
 * `patchbay tools check <tool> '<json args>'`: the verdict the ToolGate (core/tool-calls/tool-gate.ts) gives
 * a tool call in the current folder's workspace, outside any chat: allow, ask or deny, and why.
 * The same rules a chat turn in this folder follows (config, trust mode, containment, protected
 * paths, preToolCall hooks). Exit status: 0 allow, 3 ask, 4 deny, 2 bad usage.
 */
import { usageError } from './help.js';
import { Workspace } from '../runtime/workspace.js';
import { workspaceGate } from '../runtime/tool-gate-source.js';
import { escapeControlChars } from '../util/text.js';
import { errorMessage, logToStderr } from '../util/log.js';
import { underDeadline } from '../util/deadline.js';

/** Exit status per verdict (3 is also `patchbay chat`'s "a call needed approval"). */
export const CHECK_EXIT = { allow: 0, ask: 3, deny: 4 } as const;

export async function runTools(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== 'check') {
    const why =
      sub === undefined ? 'a subcommand is needed: check' : sub.startsWith('-') ? `Unknown option ${escapeControlChars(sub.split('=')[0]!)}` : `Unknown subcommand "${escapeControlChars(sub)}"`;
    return usageError('tools', why);
  }
  const parsed = parseCheck(rest);
  if (typeof parsed === 'string') return usageError('tools', parsed);
  logToStderr(false);
  const workspace = await Workspace.create({
    roots: [process.cwd()],
    env: process.env,
    configFile: parsed.configFile,
    // No front end: nothing is asked and nothing runs; the call is only judged.
    frontEnd: { canAsk: false, canShowDiffs: false },
    events: { event() {}, opened() {}, cleared() {}, deleted() {}, showMessage() {} },
  });
  try {
    const name = parsed.tool.includes('__') ? parsed.tool : `patchbay__${parsed.tool}`;
    // An MCP server's tool is known once the server is up; the native ones are there already.
    if (!workspace.tools.get(name)) {
      void workspace.startServers();
      await underDeadline(20_000, [], (signal) => workspace.settle(signal));
    }
    if (!workspace.tools.get(name)) return usageError('tools', `Unknown tool "${escapeControlChars(name)}"`);
    // The agent files are read in the background; a subagent named here must be among them.
    if (parsed.agent !== undefined) {
      await workspace.agentDefs.refresh();
      const known = ['code', 'plan', ...workspace.agentDefs.list().map((d) => d.name)];
      if (!known.includes(parsed.agent)) return usageError('tools', `Unknown agent "${escapeControlChars(parsed.agent)}": one of ${known.join(', ')}`);
    }
    const agent = parsed.agent ?? workspace.config.chat.defaultAgent;
    const v = await underDeadline(60_000, [], (signal) =>
      workspaceGate(workspace, process.env).decide({
        tool: name,
        args: parsed.args,
        roots: workspace.roots,
        // As a new chat in this folder would: its configured trust and agent unless the flags say otherwise.
        trust: parsed.trust || workspace.config.chat.defaultTrust === true,
        ...(agent !== undefined ? { agent } : {}),
        signal,
      }),
    );
    const rewritten = v.args !== parsed.args;
    if (parsed.json) {
      const out = { tool: name, verdict: v.kind, reason: v.reason, outside: v.outside, ...(v.protected ? { protected: v.protected } : {}), ...(rewritten ? { args: v.args } : {}) };
      process.stdout.write(`${JSON.stringify(out)}\n`);
    } else {
      process.stdout.write(`${v.kind}: ${escapeControlChars(v.reason)}\n`);
      if (rewritten) process.stdout.write(`(a preToolCall hook rewrote the arguments: ${escapeControlChars(JSON.stringify(v.args))})\n`);
    }
    process.exitCode = CHECK_EXIT[v.kind];
  } catch (e) {
    process.stderr.write(`patchbay tools check: ${errorMessage(e)}\n`);
    process.exitCode = 1;
  } finally {
    await workspace.dispose();
  }
}

interface CheckArgs {
  tool: string;
  args: Record<string, unknown>;
  trust: boolean;
  json: boolean;
  agent?: string;
  configFile?: string;
}

/** `<tool> ['<json args>'] [--trust] [--agent <name>] [--json] [--config-file <path>]`, or what is wrong. */
function parseCheck(argv: string[]): CheckArgs | string {
  const positional: string[] = [];
  let trust = false;
  let json = false;
  let agent: string | undefined;
  let configFile: string | undefined;
  let onlyPositional = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (onlyPositional || !a.startsWith('--')) {
      positional.push(a);
      continue;
    }
    if (a === '--') {
      onlyPositional = true;
      continue;
    }
    const eq = a.indexOf('=');
    const flag = a.slice(0, eq < 0 ? undefined : eq);
    const value = () => (eq >= 0 ? a.slice(eq + 1) : argv[++i]);
    if (flag === '--trust' && eq < 0) trust = true;
    else if (flag === '--json' && eq < 0) json = true;
    else if (flag === '--agent' || flag === '--config-file') {
      const v = value();
      if (v === undefined || v === '') return `Option ${flag} needs a value`;
      if (flag === '--agent') agent = v;
      else configFile = v;
    } else return `Unknown option ${escapeControlChars(flag)}`;
  }
  const [tool, text, extra] = positional;
  if (!tool) return 'check needs a tool name (shell_command, or <server>__<tool>)';
  if (extra !== undefined) return 'check takes a tool and its arguments as one JSON object: \'{"command":"ls"}\'';
  let args: unknown = {};
  if (text !== undefined) {
    try {
      args = JSON.parse(text);
    } catch (e) {
      return `the arguments are not JSON: ${errorMessage(e)}`;
    }
  }
  if (!args || typeof args !== 'object' || Array.isArray(args)) return 'the arguments must be a JSON object';
  return { tool, args: args as Record<string, unknown>, trust, json, ...(agent !== undefined ? { agent } : {}), ...(configFile !== undefined ? { configFile } : {}) };
}
