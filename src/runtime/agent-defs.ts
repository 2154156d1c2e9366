/**
 * The subagents a workspace offers: the built-in ones, then agent Markdown files (user, then
 * project: `~/.config/patchbay/agents`, `~/.config/eca/agents`, `<root>/.patchbay/agents`,
 * `<root>/.eca/agents`, and the `agent` config key's entries — a later one of the same name wins).
 *
 * Read again when the config is reloaded (folders changed too), and in the background when asked
 * for after READ_AGAIN_MS, so a file added or edited is picked up without a restart. A file in a
 * folder the user has not trusted, or new or changed since they trusted it (config/trust.ts
 * `fileTrust`), loses what would widen approvals (its allow rules). A project's file never
 * replaces a built-in agent or one of the user's own: it gets a distinct name (distinctProjectNames).
 */
import { realpath } from 'node:fs/promises';
import { readBounded } from '../util/small-file.js';
import type { Config } from '../config/schema.js';
import { isWithin } from '../util/paths.js';
import { agentFileSources, listAgentFiles } from '../config/agent-files.js';
import { BUILT_IN_SUBAGENTS, mergeDefs, type SubagentDef } from '../core/subagents/definitions.js';
import { parseAgentConfig, parseAgentFile } from '../core/subagents/parse.js';
import type { RuntimeBoard } from '../core/agent-files/runtime-board.js';
import { errorMessage, logger } from '../util/log.js';
import { fileTrustWhy, type FileTrust } from '../config/trust.js';

const log = logger('agents');
/** A scan older than this is done again (in the background) when the list is read. */
const READ_AGAIN_MS = 2_000;
const AGENT_FILE = /\.md$/i;
const MAX_BYTES = 256 * 1024;

export interface AgentDefsHost {
  roots(): string[];
  config(): Config;
  env: NodeJS.ProcessEnv;
  homeDir?: string;
  /** How a workspace folder's file stands with the user's trust (config/trust.ts `fileTrust`, `bytes` its content now). */
  fileTrust(root: string, path: string, bytes: Buffer): FileTrust;
  board: RuntimeBoard;
}

export class AgentDefs {
  private defs: SubagentDef[] = [...BUILT_IN_SUBAGENTS];
  /** Files whose approvals were narrowed (untrusted folders), for doctor. */
  private narrowed: string[] = [];
  private scannedAt = 0;
  private scanning: Promise<void> | undefined;
  private again = false;

  constructor(private readonly host: AgentDefsHost) {
    host.board.setSummary('agents', () => this.summary());
  }

  /** The subagents now (a stale list starts a new scan, read next time). */
  list(): SubagentDef[] {
    if (Date.now() - this.scannedAt > READ_AGAIN_MS) void this.refresh();
    return this.defs;
  }

  /** Resolves when no scan is running, or after `ms` (a slow disk never holds a turn for long). */
  async settled(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.scanning, new Promise<void>((r) => (timer = setTimeout(r, ms).unref()))]);
    clearTimeout(timer);
  }

  /** Scans the files and the config again; calls during a scan make one more after it. */
  refresh(): Promise<void> {
    if (this.scanning) {
      this.again = true;
      return this.scanning;
    }
    this.scannedAt = Date.now();
    this.scanning = this.scan()
      .catch((e: unknown) => log.warn(`reading agent files: ${errorMessage(e)}`))
      .finally(() => {
        this.scanning = undefined;
        if (this.again) {
          this.again = false;
          void this.refresh();
        }
      });
    return this.scanning;
  }

  private async scan(): Promise<void> {
    const config = this.host.config();
    const roots = this.host.roots();
    const sources = agentFileSources('agents', { roots, env: this.host.env, homeDir: this.host.homeDir });
    const listing = await listAgentFiles(sources, (name) => AGENT_FILE.test(name), { maxDepth: 1 });
    const problems = listing.problems.map((p) => `Agent files: ${p.path}: ${p.message}`);
    const fromFiles: FileDef[] = [];
    const narrowed: string[] = [];
    for (const f of listing.files) {
      let bytes: Buffer;
      try {
        // A prompt, not a data file: a huge one (read again every few seconds) is refused, as skills' are.
        // Opened without blocking and only when a regular file: a FIFO would hold a libuv thread for good.
        const r = await readBounded(f.path, MAX_BYTES, { whole: true });
        if (r.kind !== 'file') throw new Error('not a regular file');
        if (r.more) throw new Error(`larger than ${MAX_BYTES / 1024} KiB`);
        bytes = r.bytes;
      } catch (e) {
        problems.push(`Agent file ${f.path}: ${errorMessage(e)}`);
        continue;
      }
      // A project file widens approvals only as the user trusted it: a file new or changed since is an untrusted folder's again.
      const trust: FileTrust = f.source.scope === 'user' || f.source.root === undefined ? 'trusted' : this.host.fileTrust(f.source.root, f.path, bytes);
      const widen = trust === 'trusted';
      // A link out of a folder the user has not trusted would have us read (and send the model) any file of theirs.
      if (!widen && f.source.root !== undefined && !(await staysInside(f.source.root, f.path))) {
        problems.push(
          `Agent file ${f.path} is skipped: it links outside ${f.source.root}, ${trust === 'untrusted' ? 'a folder you have not trusted' : `and is ${fileTrustWhy(trust, f.source.root)}`}.`,
        );
        continue;
      }
      const parsed = parseAgentFile(f.path, bytes.toString('utf8'), { widen });
      if (parsed.kind === 'bad') problems.push(`Agent file ${f.path} is skipped: ${parsed.problems.join('; ')}.`);
      else if (parsed.kind === 'subagent') {
        fromFiles.push({ def: parsed.def, scope: f.source.scope, path: f.path });
        if (parsed.narrowed) {
          narrowed.push(f.path);
          // The user trusted this folder, so they expect its agents' approvals: say why they are off (an untrusted folder's are told at /trust).
          if (trust !== 'untrusted' && trust !== 'trusted' && f.source.root !== undefined)
            problems.push(
              `Agent file ${f.path} is ${fileTrustWhy(trust, f.source.root)}, so its tool auto-approvals are held back: its calls ask. If you trust it, run /trust in a chat or \`patchbay trust ${f.source.root}\`.`,
            );
        }
      }
    }
    const fromConfig: SubagentDef[] = [];
    for (const [name, entry] of Object.entries(config.agent ?? {})) {
      const parsed = parseAgentConfig(name, entry);
      if (parsed.kind === 'bad') problems.push(`Agent "${name}" in the config is skipped: ${parsed.problems.join('; ')}.`);
      else if (parsed.kind === 'subagent') fromConfig.push(parsed.def);
    }
    const { user, project, renamed } = distinctProjectNames(fromFiles);
    for (const r of renamed) {
      const notice = `Agent file ${r.path} names its agent "${r.name}", which is ${r.taken}: a project's agent never replaces it, so this one is offered as "${r.as}".`;
      log.info(notice);
      problems.push(notice);
    }
    this.defs = mergeDefs([...BUILT_IN_SUBAGENTS], user, project, fromConfig);
    this.narrowed = narrowed;
    this.host.board.setProblems('agents', problems);
  }

  private summary(): string[] {
    const custom = this.defs.filter((d) => d.origin !== 'built-in');
    return [
      `Subagents: ${this.defs.map((d) => d.name).join(', ')} (at most ${this.host.config().subagents.maxParallel} at once)`,
      ...custom.map((d) => `  ${d.name}: ${d.origin}${d.model ? `, model ${d.model}` : ''}${d.maxSteps ? `, at most ${d.maxSteps} steps` : ''}`),
      ...this.narrowed.map((p) => `  ${p}: in a folder you have not trusted (or changed since you did), so its tool auto-approvals are ignored`),
    ];
  }
}

interface FileDef {
  def: SubagentDef;
  scope: 'user' | 'project';
  path: string;
}

/** The prefix a project agent gets when its name is a built-in's or one of the user's own (issue 31). */
export const PROJECT_AGENT_PREFIX = 'project-';

/**
 * A project's agent file never replaces a built-in agent or one of the user's own files (a cloned
 * repository's `explorer.md` must not turn the read-only explorer into one that writes): one of
 * the same name is offered as `project-<name>` (`project-<name>-2`… when that is taken too). Agent
 * names hold only `a-z0-9_.-` (parse.ts), so the new name is one the model can pass to spawn_agent.
 */
function distinctProjectNames(files: FileDef[]): { user: SubagentDef[]; project: SubagentDef[]; renamed: Array<{ path: string; name: string; as: string; taken: string }> } {
  const user = files.filter((f) => f.scope === 'user').map((f) => f.def);
  const builtIn = new Set(BUILT_IN_SUBAGENTS.map((d) => d.name));
  const userNames = new Set(user.map((d) => d.name));
  const projectNames = new Set(files.filter((f) => f.scope === 'project').map((f) => f.def.name));
  const taken = new Set([...builtIn, ...userNames, ...projectNames]);
  const renamed: Array<{ path: string; name: string; as: string; taken: string }> = [];
  const project = files
    .filter((f) => f.scope === 'project')
    .map((f) => {
      const name = f.def.name;
      if (!builtIn.has(name) && !userNames.has(name)) return f.def;
      let as = `${PROJECT_AGENT_PREFIX}${name}`;
      for (let n = 2; taken.has(as); n++) as = `${PROJECT_AGENT_PREFIX}${name}-${n}`;
      taken.add(as);
      renamed.push({ path: f.path, name, as, taken: builtIn.has(name) ? 'a built-in agent' : 'your own agent' });
      return { ...f.def, name: as };
    });
  return { user, project, renamed };
}

/** Whether `path`, its links followed, is still inside `root` (its links followed too). */
async function staysInside(root: string, path: string): Promise<boolean> {
  try {
    return isWithin(await realpath(root), await realpath(path));
  } catch {
    return false;
  }
}
