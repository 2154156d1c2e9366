/**
 * The workspace's skills (core/agent-files/skills.ts): found where ECA and the agentskills convention put them
 * (config/agent-files.ts), read anew at each use through an mtime cache (./md-file-cache.ts), and
 * offered three ways: the catalog in the system prompt, the `patchbay__skill` tool, and a
 * `/<name>` command each. Bad SKILL.md files are skipped and reported on the runtime board.
 *
 * On a name clash the first in ECA's order wins: the `skills` config entries, then the user's
 * folders, then the project's (agent-files-host.ts `byPrecedence`); within one, the first found
 * (`.patchbay` before `.eca` before `.agents`). `doctor` says which one won.
 */
import type { AgentFileSource } from '../config/agent-files.js';
import type { Command } from '../core/chat/commands.js';
import { runTemplate } from '../core/agent-files/custom-commands.js';
import { parseSkill, skillsPromptSection, type ParsedSkill, type Skill } from '../core/agent-files/skills.js';
import { skillTool } from '../core/tools/skill.js';
import type { PromptScope, PromptSection } from '../core/turn/prompt-sections.js';
import { decideApproval } from '../core/tool-calls/approval.js';
import { displayPath, MdFileCache } from './md-file-cache.js';
import { byPrecedence, scanFiles, type AgentFilesHost } from './agent-files-host.js';

/** What the model calls the tool (ECA: `eca__skill`). */
const TOOL_NAME = 'patchbay__skill';

interface State {
  key: string;
  skills: Skill[];
  origins: Map<string, AgentFileSource>;
  shadowed: string[];
  section: PromptSection | undefined;
  commands: Command[];
  problems: string[];
}

export class SkillCatalog {
  private readonly cache = new MdFileCache<ParsedSkill>(parseSkill);
  private state: State = { key: '\0none', skills: [], origins: new Map(), shadowed: [], section: undefined, commands: [], problems: [] };
  private readonly tool = skillTool(() => this.state.skills);
  private toolOffered = false;

  constructor(private readonly host: AgentFilesHost) {}

  /** Wires the catalog into the workspace: prompt section, commands, doctor lines. */
  install(): this {
    this.host.prompt.set('skills', (scope) => this.sections(scope));
    // `/skills` is native (ECA commands.clj): a fixed source, listed and matched before any file's
    // command, so a `skills.md` custom command cannot take its name.
    this.host.commands.set('skills-list', [listCommand(() => this.skills())]);
    this.host.commands.live('skills', () => this.refresh().commands);
    this.host.board.setSummary('skills', () => this.doctorLines());
    // Asked at each prompt before the turn starts (core/chat/chats.ts): the files are checked then, so
    // the first request already offers the tool and a broken file is told at once.
    this.host.board.setProblems('skills', () => this.refresh().problems);
    // Once now: the editor's list of native tools (sent at initialize) includes the skill tool when
    // there are skills to load. A few stats; nothing is read again until asked.
    this.refresh();
    return this;
  }

  skills(): Skill[] {
    return this.refresh().skills;
  }

  /**
   * The catalog for one request. It points the model at the skill tool, so it is left out when the
   * request does not offer the tool (a subagent or `disabledTools` without it), and a skill that a
   * deny rule refuses for this chat is not listed (ECA chat.clj: skills whose `eca__skill` approval
   * is deny for the agent are removed before the prompt is built).
   */
  private sections(scope: PromptScope): PromptSection[] {
    const { skills, section } = this.refresh();
    if (!section) return [];
    const tool = scope.tools ? scope.tools.find((t) => t.server === this.tool.server && t.name === this.tool.name) : this.tool;
    if (!tool) return [];
    const allowed = skills.filter((s) => decideApproval(tool, { name: s.name }, scope.approval) !== 'deny');
    if (allowed.length === skills.length) return [section];
    const narrowed = skillsPromptSection(allowed, TOOL_NAME);
    return narrowed ? [narrowed] : [];
  }

  private show(path: string): string {
    return displayPath(path, this.host.roots(), this.host.homeDir);
  }

  /** Re-reads what changed (cheap when nothing did) and updates the tool, problems and commands. */
  private refresh(): State {
    const scan = scanFiles(this.host, this.cache, 'skills', { match: (n) => n === 'SKILL.md', leaf: true }, { folder: 'Skills', file: 'Skill' });
    if (scan.key !== this.state.key) this.state = this.build(scan.key, scan.files);
    this.state.problems = scan.problems;
    // Offered only while there is a skill to load (ECA's `enabled-fn`).
    const offer = this.state.skills.length > 0;
    if (offer !== this.toolOffered) {
      this.host.tools.set('skills', offer ? [this.tool] : []);
      this.toolOffered = offer;
    }
    return this.state;
  }

  private build(key: string, files: { path: string; source: AgentFileSource; value: ParsedSkill }[]): State {
    const byName = new Map<string, { skill: Skill; source: AgentFileSource }>();
    const shadowed: string[] = [];
    const ordered = byPrecedence(files);
    for (const f of ordered) {
      if (!f.value.ok) continue;
      const skill = f.value.skill;
      const won = byName.get(skill.name);
      if (won) {
        shadowed.push(`skill "${skill.name}": ${this.show(won.skill.file)} (${won.source.scope}) wins over ${this.show(skill.file)} (${f.source.scope})`);
        continue;
      }
      byName.set(skill.name, { skill, source: f.source });
    }
    const skills = [...byName.values()].map((v) => v.skill).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return {
      key,
      skills,
      origins: new Map([...byName].map(([n, v]) => [n, v.source])),
      shadowed,
      section: skillsPromptSection(skills, TOOL_NAME),
      commands: skills.map((s) => skillCommand(s)),
      problems: [],
    };
  }

  private doctorLines(): string[] {
    const { skills, origins, shadowed } = this.refresh();
    if (!skills.length) return ['Skills: none'];
    return [`Skills (${skills.length}): ${skills.map((s) => `${s.name} (${origins.get(s.name)?.scope ?? '?'}: ${this.show(s.file)})`).join(', ')}`, ...shadowed.map((s) => `Skills: ${s}`)];
  }
}

/**
 * `/<name>`: with arguments the body is rendered and sent as the prompt; without, a prompt that
 * makes the model load the skill (ECA commands.clj `handle-command!`: "Load skill: <name>").
 */
function skillCommand(skill: Skill): Command {
  return {
    name: skill.name,
    description: skill.description,
    type: 'skill',
    arguments: skill.arguments,
    run: async (args) =>
      args.length && !skill.literal
        ? runTemplate(skill.name, skill.body, skill.arguments, skill.named, args)
        : { kind: 'prompt', userText: [`Load skill: ${skill.name}`, ...(args.length ? [args.join(' ')] : [])].join('\n\n') },
  };
}

/** `/skills`: ECA's native command listing them (commands.clj "skills"). */
function listCommand(current: () => readonly Skill[]): Command {
  const text = (skills: readonly Skill[]) => (skills.length ? `Skills available:\n\n${skills.map((s) => `- ${s.name}: ${s.description}`).join('\n')}` : 'No skills found.');
  return { name: 'skills', description: 'List available skills', type: 'native', arguments: [], run: async () => ({ kind: 'show', text: text(current()) }) };
}
