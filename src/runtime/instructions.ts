/**
 * Project instructions (AGENTS.md and its fallbacks) and rules (runtime half; the matching is
 * core/agent-files/rules.ts), read from disk into the system prompt.
 *
 * Instructions files, in prompt order (the most specific last):
 * 1. the user's `~/.config/patchbay/AGENTS.md`, else `~/.config/eca/AGENTS.md` (ECA context.clj
 *    `agents-file-contexts` reads the latter; ECA puts it last, we put it first so project files win);
 * 2. for each workspace folder, each folder from its git root (the nearest folder up holding
 *    `.git`; the workspace folder itself when there is none; ECA's `includeParentAgentsFiles`:
 *    `true` every parent, `false` none) down to the workspace folder:
 *    its `AGENTS.md`, else its `CLAUDE.md`, else (only at the git root and the workspace folder)
 *    its `.github/copilot-instructions.md`.
 * Each is followed by the files it @-mentions (`@docs/style.md`, from its folder, or absolute;
 * ECA context.clj `parse-agents-file`), recursively, each file once, at most 50 files in all.
 * Each is cut at 64 KB (told once per chat and by doctor).
 *
 * Everything is read synchronously into a snapshot; each request stats the files and folders it
 * came from (and the config and folders it depends on) and reads again only when one changed, so
 * prompt assembly costs a few stats.
 *
 * Trust: a project file (`.patchbay/rules`, `.eca/rules`, AGENTS.md…) of a folder that is not
 * trusted is read only when its real path stays inside the folder (its git root for parents'
 * files, the files they @-mention included), whether the rules folder was found by convention or named by a config `rules` entry: a
 * symbolic link in a repository must not read the user's files into a prompt. Config `rules`
 * entries from an untrusted workspace config that leave it as written are held back (held-back.ts).
 */
import { readdirSync, realpathSync, statSync, openSync, readSync, closeSync } from 'node:fs';
import { llmName } from '../shapes/tool-names.js';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { isWithin } from '../util/paths.js';
import { agentFileSources, type AgentFileSource } from '../config/agent-files.js';
import type { Config } from '../config/schema.js';
import type { Command } from '../core/chat/commands.js';
import type { PromptScope, PromptSection } from '../core/turn/prompt-sections.js';
import type { TemplateVars } from '../core/agent-files/rule-template.js';
import { chatRuleState, fileToolAction, fileToolPaths, matchRule, parseRule, renderRule, ruleApplies, rulesInPlay, type Rule, type RuleMatch } from '../core/agent-files/rules.js';
import { inPlayRulesText, missingRulesText, rulesCommandText, rulesPromptText, type InstructionsFileInfo } from '../core/agent-files/rules-text.js';
import type { RuntimeBoard } from '../core/agent-files/runtime-board.js';
import type { StoredMessage } from '../core/chat/stored-message.js';
import { fetchRuleTool } from '../core/tools/fetch-rule.js';
import { userConfigDir } from '../util/locations.js';
import { errorMessage } from '../util/log.js';
import { textResult, type Tool } from '../shapes/tool.js';

export const MAX_INSTRUCTIONS_BYTES = 64 * 1024;
/** Rule files read in all, and files read per folder walk: a runaway folder costs no more. */
const MAX_RULE_FILES = 500;
/** Folder entries looked at in all when listing rules folders. */
const MAX_WALK_ENTRIES = 5000;
/** Instructions files in all, @-mentioned ones included: mentions cannot pull a whole tree in. */
const MAX_INSTRUCTIONS_FILES = 50;

export interface InstructionsHost {
  roots(): string[];
  config(): Config;
  env: NodeJS.ProcessEnv;
  homeDir?: string;
  /** The user trusts this workspace folder (config/trust.ts). */
  trusted(root: string): boolean;
  board: RuntimeBoard;
  stored(chatId: string): readonly StoredMessage[];
  /** Folder entries a scan of the rules folders looks at, at most (default 5000; tests lower it). */
  maxWalkEntries?: number;
  /** Told after each read whether there is any path-scoped rule at all (fetch_rule is offered then). */
  pathScopedChanged?(any: boolean): void;
}

interface InstructionsFile extends InstructionsFileInfo {
  text: string;
}

interface Snapshot {
  key: string;
  /** What each path was when read: `mtime:size`, or `-` when missing. */
  stamps: Map<string, string>;
  files: InstructionsFile[];
  rules: Rule[];
  problems: string[];
}

function stampOf(path: string): string {
  try {
    const st = statSync(path, { throwIfNoEntry: false });
    return st ? `${st.mtimeMs}:${st.size}` : '-';
  } catch {
    return '?';
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
  } catch {
    return false;
  }
}

/** The file's first `max` bytes as text, and whether it was longer. */
function readCapped(path: string, max: number): { text: string; cut: boolean; size: number } {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(max + 1);
    const n = readSync(fd, buf, 0, max + 1, 0);
    const cut = n > max;
    const text = buf.subarray(0, Math.min(n, max)).toString('utf8');
    // A cut may split a character: drop its replacement mark.
    return { text: cut ? text.replace(/\uFFFD$/, '') : text, cut, size: cut ? statSync(path).size : n };
  } finally {
    closeSync(fd);
  }
}

function realInside(boundary: string, path: string): boolean {
  try {
    return isWithin(realpathSync(boundary), realpathSync(path));
  } catch {
    return false;
  }
}

/**
 * The folders whose instructions are read, outermost first: from the git root down to `root` (just
 * `root` without a git root); with ECA's `includeParentAgentsFiles` `true` every parent up to the
 * filesystem root, with `false` only `root`.
 */
function folderChain(root: string, parents: boolean | undefined): string[] {
  const chain: string[] = [];
  if (parents === false) return [resolve(root)];
  for (let d = resolve(root); ; d = dirname(d)) {
    chain.unshift(d);
    if (parents === undefined && stampOf(join(d, '.git')) !== '-') return chain;
    if (dirname(d) === d) return parents ? chain : [resolve(root)];
  }
}

/**
 * ECA's `toolEnabled_<full name>` template variables, for each tool offered; a native tool also
 * under ECA's own prefix (`toolEnabled_eca__shell_command`), so rules written for ECA work as is.
 */
function toolVars(tools: readonly string[] | undefined): TemplateVars {
  const vars: Record<string, boolean> = {};
  for (const t of tools ?? []) {
    vars[`toolEnabled_${t}`] = true;
    if (t.startsWith('patchbay__')) vars[`toolEnabled_eca__${t.slice('patchbay__'.length)}`] = true;
  }
  return vars;
}

/**
 * The files an instructions file @-mentions (ECA context.clj `extract-at-mentions`: `@` then a
 * path ending in `.ext`), absolute or from the file's folder. Whether each exists is the caller's.
 */
function mentionedFiles(text: string, dir: string): string[] {
  return [...new Set([...text.matchAll(/@([^\s)]+\.\w+)/g)].map((m) => resolve(dir, m[1])))];
}

function xmlAttr(v: string): string {
  return `"${v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')}"`;
}

export class ProjectInstructions {
  private snap: Snapshot | undefined;
  /** Each chat's agent and model as its last request saw them (what fetch_rule and enforce go by). */
  private readonly lastScope = new Map<string, { agent?: string; model?: string; vars: TemplateVars; canFetch: boolean }>();
  readonly tool: Tool;

  constructor(private readonly host: InstructionsHost) {
    this.tool = fetchRuleTool({ pathScoped: (chatId) => this.pathScoped(chatId), stored: (chatId) => host.stored(chatId) });
    host.board.setSummary('rules', () => this.summary());
  }

  /** The snapshot, read again when the config, the folders or any file read changed. */
  current(): Snapshot {
    const roots = this.host.roots();
    const config = this.host.config();
    const key = JSON.stringify({ roots, rules: config.rules ?? [], parents: config.includeParentAgentsFiles, trusted: roots.map((r) => this.host.trusted(r)) });
    const s = this.snap;
    if (s && s.key === key && [...s.stamps].every(([p, v]) => stampOf(p) === v)) return s;
    const before = s?.rules.some((r) => r.paths);
    this.snap = this.scan(key, roots);
    this.matchCache.clear();
    this.host.board.setProblems('rules', this.snap.problems);
    const now = this.snap.rules.some((r) => r.paths);
    if (now !== before) this.host.pathScopedChanged?.(now);
    return this.snap;
  }

  private scan(key: string, roots: string[]): Snapshot {
    const stamps = new Map<string, string>();
    const stamp = (p: string): string => {
      const v = stampOf(p);
      stamps.set(p, v);
      return v;
    };
    const problems: string[] = [];
    const files = this.readInstructions(roots, stamp, problems);
    const rules = this.readRules(roots, stamp, problems);
    return { key, stamps, files, rules, problems };
  }

  private readInstructions(roots: string[], stamp: (p: string) => string, problems: string[]): InstructionsFile[] {
    const env = this.host.env;
    const home = this.host.homeDir ?? homedir();
    const out: InstructionsFile[] = [];
    const seen = new Set<string>();
    const take = (path: string, kind: string, boundary?: string, mentionedBy?: string): void => {
      if (seen.has(path) || out.length >= MAX_INSTRUCTIONS_FILES) return;
      seen.add(path);
      if (boundary && !realInside(boundary, path)) {
        const why = mentionedBy ? `mentioned in ${mentionedBy}, is outside ${boundary}` : `links outside ${boundary}`;
        problems.push(`rules: ${path}: ${why}, a folder you have not trusted; not read`);
        return;
      }
      let text: string;
      try {
        const r = readCapped(path, MAX_INSTRUCTIONS_BYTES);
        if (r.cut) problems.push(`rules: ${path} is ${Math.round(r.size / 1024)} KB; only its first 64 KB is in the prompt`);
        const note = r.cut ? `\n[cut: only the first 64 KB of this file is included]` : '';
        text = r.text;
        out.push({ path, kind, cut: r.cut, text: `<agents-file description="Primary System Directives &amp; Coding Standards." path=${xmlAttr(path)}>\n${text.trim()}${note}\n</agents-file>` });
      } catch (e) {
        problems.push(`rules: ${path}: ${errorMessage(e)}`);
        return;
      }
      // ECA context.clj `parse-agents-file`: files it @-mentions follow it, each once.
      for (const m of mentionedFiles(text, dirname(path))) {
        stamp(m);
        if (isFile(m)) take(m, kind, boundary, path);
      }
    };
    for (const dir of [userConfigDir(env, home), userConfigDir(env, home, 'eca')]) {
      const p = join(dir, 'AGENTS.md');
      stamp(p);
      if (isFile(p)) {
        take(p, 'user');
        break;
      }
    }
    for (const root of roots) {
      const chain = folderChain(root, this.host.config().includeParentAgentsFiles);
      const top = chain[0];
      const boundary = this.host.trusted(root) ? undefined : top;
      for (const dir of chain) {
        const names = ['AGENTS.md', 'CLAUDE.md'];
        if (dir === top || dir === chain[chain.length - 1]) names.push(join('.github', 'copilot-instructions.md'));
        for (const name of names) {
          const p = join(dir, name);
          stamp(p);
          if (isFile(p)) {
            take(p, dir === chain[chain.length - 1] ? 'workspace' : 'parent', boundary);
            break;
          }
        }
      }
    }
    return out;
  }

  private readRules(roots: string[], stamp: (p: string) => string, problems: string[]): Rule[] {
    const sources = agentFileSources('rules', { roots, env: this.host.env, homeDir: this.host.homeDir, configPaths: this.host.config().rules ?? [] });
    const rules: Rule[] = [];
    const seen = new Set<string>();
    const add = (path: string, source: AgentFileSource): void => {
      if (seen.has(path) || seen.size >= MAX_RULE_FILES) return;
      seen.add(path);
      stamp(path);
      // Config entries too: a path inside an untrusted folder is the repository's, and so are its links.
      const fromRepo = source.scope === 'project' && source.root !== undefined && !this.host.trusted(source.root);
      if (fromRepo && !realInside(source.root!, path)) {
        problems.push(`rules: ${path}: links outside ${source.root}, a folder you have not trusted; not read`);
        return;
      }
      let text: string;
      try {
        const r = readCapped(path, MAX_INSTRUCTIONS_BYTES);
        if (r.cut) problems.push(`rules: ${path} is ${Math.round(r.size / 1024)} KB; only its first 64 KB is read`);
        text = r.text;
      } catch (e) {
        problems.push(`rules: ${path}: ${errorMessage(e)}`);
        return;
      }
      const parsed = parseRule(path, text, { scope: source.scope === 'project' ? 'project' : 'global', root: source.root });
      if (parsed.ok === false) problems.push(`rules: ${path}: ${parsed.error}; the rule is skipped`);
      else if (parsed.rule.body) rules.push(parsed.rule);
    };
    // Entries looked at in all: a rules folder that is (or links to) a huge tree is read no further.
    const maxEntries = this.host.maxWalkEntries ?? MAX_WALK_ENTRIES;
    let budget = maxEntries;
    const walk = (dir: string, source: AgentFileSource, depth: number): void => {
      // A folder of an untrusted repository linking out of it is not walked at all (a link to `/`
      // would otherwise be walked at every change).
      if (source.scope === 'project' && source.root !== undefined && !this.host.trusted(source.root) && !realInside(source.root, dir)) {
        problems.push(`rules: ${dir}: links outside ${source.root}, a folder you have not trusted; not read`);
        return;
      }
      let entries;
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch (e) {
        problems.push(`rules: ${dir}: ${errorMessage(e)}`);
        return;
      }
      const found: string[] = [];
      for (const ent of entries) {
        if (budget-- <= 0) {
          if (budget === -1) problems.push(`rules: ${source.path}: more than ${maxEntries} entries; the rest is not read`);
          break;
        }
        // As ECA: every file of the folder, recursively; hidden ones (editor backups, .DS_Store) skipped.
        if (ent.name.startsWith('.')) continue;
        const p = join(dir, ent.name);
        let st;
        try {
          st = statSync(p);
        } catch {
          continue;
        }
        if (st.isDirectory()) {
          if (depth < 8) {
            stamp(p);
            walk(p, source, depth + 1);
          }
        } else if (st.isFile()) found.push(p);
      }
      for (const p of found.sort()) add(p, source);
    };
    for (const source of sources) {
      const v = stamp(source.path);
      if (v === '-') {
        if (source.origin.startsWith('config ')) problems.push(`rules: ${source.origin}: ${source.path} not found`);
        continue;
      }
      let st;
      try {
        st = statSync(source.path);
      } catch (e) {
        problems.push(`rules: ${source.path}: ${errorMessage(e)}`);
        continue;
      }
      if (st.isDirectory()) walk(source.path, source, 1);
      else add(source.path, source);
    }
    return rules;
  }

  /** The rules that apply to an agent and model, static and path-scoped. */
  applicable(agent: string | undefined, model: string | undefined, snap = this.current()): { statics: Rule[]; pathScoped: Rule[] } {
    const rules = snap.rules.filter((r) => ruleApplies(r, agent, model));
    const pathScoped = this.fetchRuleOffered() ? rules.filter((r) => r.paths) : [];
    return { statics: rules.filter((r) => !r.paths), pathScoped };
  }

  /** ECA: without `fetch_rule` (disabled), path-scoped rules are inactive. */
  private fetchRuleOffered(): boolean {
    const disabled = this.host.config().disabledTools;
    return !disabled.includes('fetch_rule') && !disabled.includes('patchbay__fetch_rule');
  }

  /** The chat's path-scoped rules, their bodies rendered for it. */
  pathScoped(chatId: string): Rule[] {
    const s = this.lastScope.get(chatId) ?? { vars: {}, canFetch: true };
    return s.canFetch ? this.applicable(s.agent, s.model).pathScoped.map((r) => renderRule(r, s.vars)) : [];
  }

  /** The prompt sections for one request (workspace.prompt source `instructions`). */
  sections(scope: PromptScope): PromptSection[] {
    if (this.lastScope.size > 1000) this.lastScope.clear();
    // ECA runs a subagent's chat with its own agent name (tools/agent.clj `spawn-agent`): rules' `agent` filters name it.
    const agent = scope.subagent ?? scope.agent;
    // ECA prompt.clj `->base-selmer-ctx`, the variables a rule's template may test.
    const vars: TemplateVars = { isSubagent: scope.subagent !== undefined, workspaceRoots: scope.roots.join(', '), ...toolVars(scope.tools?.map(llmName)) };
    // ECA prompt.clj and path_rules.clj: path-scoped rules are inactive (no catalog, no enforce) when
    // the chat cannot call fetch_rule (a subagent whose tools leave it out).
    const canFetch = !scope.tools || scope.tools.some((t) => t.server === this.tool.server && t.name === this.tool.name);
    this.lastScope.set(scope.chatId, { agent, model: scope.model, vars, canFetch });
    const snap = this.current();
    const out: PromptSection[] = snap.files.map((f) => ({ id: `instructions:${f.path}`, text: f.text, stable: true, order: 10 }));
    const applicable = this.applicable(agent, scope.model, snap);
    const statics = applicable.statics.map((r) => renderRule(r, vars));
    const pathScoped = canFetch ? applicable.pathScoped.map((r) => renderRule(r, vars)) : [];
    out.push({ id: 'rules', text: rulesPromptText(statics, pathScoped), stable: true, order: 20 });
    if (pathScoped.length) {
      const state = chatRuleState(scope.stored, scope.roots);
      const inPlay = this.inPlay(
        snap,
        pathScoped.filter((r) => !state.fetched.has(r.id)),
        state.files,
        scope.roots,
      );
      out.push({ id: 'rules:in-play', text: inPlayRulesText(inPlay), stable: false, order: 20 });
    }
    return out;
  }

  /** Which path-scoped rules of the snapshot each file matches, worked out once per file (a chat's files stay in play). */
  private readonly matchCache = new Map<string, Array<{ rule: Rule; match: RuleMatch }>>();

  /** `rules` (of `snap`) that some file in play matches, in `rules` order. */
  private inPlay(snap: Snapshot, rules: Rule[], files: string[], roots: string[]): Array<{ rule: Rule; match: RuleMatch }> {
    if (!rules.length) return [];
    const scoped = snap.rules.filter((r) => r.paths);
    const found = new Map<string, { rule: Rule; match: RuleMatch }>();
    for (const f of files) {
      let hits = this.matchCache.get(f);
      if (!hits) {
        if (this.matchCache.size > 20_000) this.matchCache.clear();
        hits = scoped.flatMap((rule) => rulesInPlay([rule], roots, [f]));
        this.matchCache.set(f, hits);
      }
      for (const h of hits) if (!found.has(h.rule.id)) found.set(h.rule.id, h);
    }
    // The rules as given (rendered for the chat), not the snapshot's the cache holds.
    return rules.flatMap((rule) => {
      const hit = found.get(rule.id);
      return hit ? [{ rule, match: hit.match }] : [];
    });
  }

  /**
   * ECA path_rules.clj `require-fetched-path-scoped-rules`: the built-in file tools refuse a file
   * that an `enforce`d rule matches until the rule was fetched, or included because a matching
   * file was already in play in the chat.
   */
  wrapTool(tool: Tool): Tool {
    const action = tool.server === 'patchbay' ? fileToolAction(tool.name) : undefined;
    if (!action) return tool;
    return {
      ...tool,
      call: async (args, ctx) => {
        const refusal = this.refusal(tool.name, action, args, ctx.chatId, ctx.roots);
        return refusal ? textResult(refusal, true) : tool.call(args, ctx);
      },
    };
  }

  private refusal(name: string, action: 'read' | 'modify', args: Record<string, unknown>, chatId: string, roots: string[]): string | undefined {
    const enforced = this.pathScoped(chatId).filter((r) => r.enforce.includes(action));
    if (!enforced.length) return undefined;
    const state = chatRuleState(this.host.stored(chatId), roots);
    const included = new Set(this.inPlay(this.current(), enforced, state.files, roots).map((x) => x.rule.id));
    const pending = enforced.filter((r) => !state.fetched.has(r.id) && !included.has(r.id));
    for (const target of fileToolPaths(name, args ?? {}, roots)) {
      const missing = pending.flatMap((rule) => {
        const match = matchRule(rule, roots, target);
        return match.match ? [{ rule, match }] : [];
      });
      if (missing.length) return missingRulesText(target, missing, action === 'read' ? 'reading' : 'modifying');
    }
    return undefined;
  }

  /** `/rules` (ECA commands.clj): the instructions files and the rules for this chat's agent and model. */
  command(): Command {
    return {
      name: 'rules',
      description: 'List available rules and their filtering metadata (agent, model, paths).',
      type: 'native',
      arguments: [],
      run: async (_args, { chat, deps }) => {
        const model = chat.model ?? deps.defaultModel()?.id;
        const { statics, pathScoped } = this.applicable(chat.agent, model);
        return { kind: 'show', text: rulesCommandText(this.current().files, statics, pathScoped) };
      },
    };
  }

  private summary(): string[] {
    const s = this.current();
    const statics = s.rules.filter((r) => !r.paths).length;
    return [
      `Project instructions (${s.files.length})${s.files.length ? `: ${s.files.map((f) => f.path).join(', ')}` : ''}`,
      `Rules (${s.rules.length}): ${statics} static, ${s.rules.length - statics} path-scoped${s.rules.length ? ` — ${s.rules.map((r) => r.id).join(', ')}` : ''}`,
    ];
  }
}
