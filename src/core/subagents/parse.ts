/**
 * Subagent definitions from Markdown files and from the `agent` config key (ECA
 * docs/config/agents.md): front-matter `name` (else the file name without its extensions,
 * lowercased), `description` (required), `mode`, `model`, `variant`, `tools`, `maxSteps`; the body
 * is the system prompt. Pure: text in, a definition or the reasons it is bad out.
 */
import { basename } from 'node:path';
import type { ApprovalConfig } from '../../config/schema.js';
import { parseFrontMatter } from '../../config/frontmatter.js';
import type { SubagentDef } from './definitions.js';

export type Parsed = { kind: 'subagent'; def: SubagentDef; /** Auto-approvals were dropped (untrusted folder). */ narrowed?: boolean } | { kind: 'primaryOnly' } | { kind: 'bad'; problems: string[] };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const MODES = ['primary', 'subagent'];

/** One agent Markdown file. `widen: false` (an untrusted folder's file): its allow rules and `byDefault: allow` are dropped. */
export function parseAgentFile(path: string, text: string, opts: { widen: boolean }): Parsed {
  const fm = parseFrontMatter(text);
  if (fm.error) return { kind: 'bad', problems: [fm.error] };
  const name = typeof fm.data.name === 'string' && fm.data.name.trim() ? fm.data.name.trim().toLowerCase() : basename(path).replace(/\..*$/, '').toLowerCase();
  return fromFields(name, fm.data, fm.body.trim(), path, opts.widen);
}

/** One `agent.<name>` config entry; only those whose `mode` names `subagent` are subagents. */
export function parseAgentConfig(name: string, entry: unknown): Parsed {
  if (!isObj(entry)) return { kind: 'bad', problems: ['not an object'] };
  // Unlike a file, an entry without `mode` is not a subagent: `agent.code`, `agent.plan` tune the primary agents.
  if (entry.mode === undefined || !modeList(entry.mode).includes('subagent')) return { kind: 'primaryOnly' };
  const prompt = typeof entry.systemPrompt === 'string' ? entry.systemPrompt.trim() : '';
  const approval = isObj(entry.toolCall) && isObj(entry.toolCall.approval) ? entry.toolCall.approval : undefined;
  const fields = { ...entry, model: entry.model ?? entry.defaultModel, tools: entry.tools ?? approval };
  // Held-back settings were removed from an untrusted layer before this sees them (config/held-back.ts).
  return fromFields(name, fields, prompt, `config "agent": ${name}`, true);
}

function modeList(v: unknown): string[] {
  if (v === undefined) return MODES;
  if (typeof v === 'string') return [v];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

function fromFields(name: string, data: Obj, prompt: string, origin: string, widen: boolean): Parsed {
  const problems: string[] = [];
  const modes = modeList(data.mode);
  const unknown = modes.filter((m) => !MODES.includes(m));
  if (unknown.length || !modes.length) problems.push(`unknown mode ${JSON.stringify(data.mode)} (use "primary", "subagent" or both)`);
  if (typeof data.description !== 'string' || !data.description.trim()) problems.push('no "description" (the model reads it to decide when to use the agent)');
  if (!prompt) problems.push('no instructions (the body of the file, or "systemPrompt")');
  if (!/^[a-z0-9][a-z0-9_.-]*$/.test(name)) problems.push(`the name "${name}" is not usable (letters, digits, "-", "_" and "." only)`);
  const maxSteps = data.maxSteps;
  if (maxSteps !== undefined && !(typeof maxSteps === 'number' && Number.isInteger(maxSteps) && maxSteps > 0)) problems.push('"maxSteps" is not a positive whole number');
  for (const key of ['model', 'variant'] as const) if (data[key] !== undefined && typeof data[key] !== 'string') problems.push(`"${key}" is not a string`);
  const tools = toolsApproval(data.tools, problems);
  if (problems.length) return { kind: 'bad', problems };
  if (!modes.includes('subagent')) return { kind: 'primaryOnly' };
  const def: SubagentDef = {
    name,
    description: (data.description as string).trim(),
    systemPrompt: prompt,
    origin,
    ...(typeof data.model === 'string' && data.model.trim() ? { model: data.model.trim() } : {}),
    ...(typeof data.variant === 'string' && data.variant.trim() ? { variant: data.variant.trim() } : {}),
    ...(typeof maxSteps === 'number' ? { maxSteps } : {}),
    ...(tools ? { tools: widen ? tools : narrowOnly(tools) } : {}),
  };
  const narrowed = !widen && tools !== undefined && (tools.byDefault === 'allow' || Object.keys(tools.allow ?? {}).length > 0);
  return { kind: 'subagent', def, ...(narrowed ? { narrowed } : {}) };
}

/**
 * `tools` as approval rules: ECA's `{ byDefault, allow, ask, deny }` (each a list of tool names,
 * `eca__shell_command(npm run .*)` matching the command, or an object of rules as in the config),
 * or a flat list: `byDefault: ask` with the list allowed (the Claude Code form).
 */
function toolsApproval(v: unknown, problems: string[]): ApprovalConfig | undefined {
  if (v === undefined) return undefined;
  if (Array.isArray(v)) return { byDefault: 'ask', allow: rules(v, problems) };
  if (!isObj(v)) {
    problems.push('"tools" is neither a list nor a {byDefault, allow, ask, deny} mapping');
    return undefined;
  }
  const out: ApprovalConfig = {};
  if (v.byDefault !== undefined) {
    if (v.byDefault === 'allow' || v.byDefault === 'ask' || v.byDefault === 'deny') out.byDefault = v.byDefault;
    else problems.push('"tools.byDefault" is not "allow", "ask" or "deny"');
  }
  for (const kind of ['allow', 'ask', 'deny'] as const) if (v[kind] !== undefined) out[kind] = rules(v[kind], problems);
  return out;
}

type Rules = NonNullable<ApprovalConfig['allow']>;

function rules(v: unknown, problems: string[]): Rules {
  if (isObj(v)) return v as Rules;
  if (!Array.isArray(v)) {
    problems.push('a "tools" rule list is not a list');
    return {};
  }
  const out: Rules = {};
  for (const item of v) {
    if (typeof item !== 'string' || !item.trim()) continue;
    // `tool(pattern)`: the pattern is matched against a shell command (ECA: only shell_command).
    const m = /^([^()\s]+)\((.*)\)$/.exec(item.trim());
    const selector = m ? m[1] : item.trim();
    if (!m) {
      out[selector] = null;
      continue;
    }
    const before = out[selector];
    const commands = before?.argsMatchers?.command ?? [];
    out[selector] = { argsMatchers: { command: [...commands, m[2]] } };
  }
  return out;
}

/** Without what widens approvals: allow rules and `byDefault: allow` (deny and ask only narrow). */
function narrowOnly(a: ApprovalConfig): ApprovalConfig {
  const { allow: _allow, byDefault, ...rest } = a;
  return { ...rest, ...(byDefault && byDefault !== 'allow' ? { byDefault } : {}) };
}
