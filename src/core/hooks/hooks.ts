/**
 * ECA's hooks engine (docs/config/hooks.md; eca features/hooks.clj `trigger-if-matches!`): for an
 * event, the matching hooks run alphabetically by name, each hook's actions in order; a
 * successful `continue: false` ends the chain, exit 2 does not. Each action gets the event as JSON
 * on stdin (top-level keys snake_case) and answers with JSON on stdout (exit 0), an intervention
 * on stderr (exit 2), or fails (any other exit: reported, the chat goes on).
 *
 * What an answer does is each event's business (./effects.ts); this runs, shows and reports.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { HOOK_TYPES, type HookConfig, type HookType } from '../../config/hooks.js';
import type { ChatEvent } from '../events.js';
import { withAgentEnv } from '../tool-calls/agent-env.js';
import { DEFAULT_HOOK_TIMEOUT_MS, MAX_STDOUT_CHARS, runAction, type ActionRun } from './runner.js';
import { badPatterns, matches, type MatchData } from './matcher.js';
import { blockText } from './effects.js';
import { killGroup } from '../tools/native/shell.js';
import { logger } from '../../util/log.js';
import { sandboxFailure, type SandboxPlan } from '../../util/sandbox.js';

const log = logger('hooks');
/** ECA's exit code for a hook's intervention (hooks.clj `hook-rejection-exit-code`). */
export const INTERVENE = 2;
/** Hooks without a chat view (ECA lifecycle.clj `notify-after-hook-action!`): no block, no systemMessage. */
const UNTRUSTED_FILE = 'Hook file not run:';
/** A workspace hook where the sandbox is required (`sandbox.enabled: true`) and cannot run. */
const REFUSED = 'Hook could not start:';
const NO_UI: ReadonlySet<HookType> = new Set(['sessionStart', 'sessionEnd', 'chatEnd', 'chatStatusChanged']);

/** One action's outcome: what ran, how it ended, its answer when it gave JSON on exit 0. */
export interface HookRun extends ActionRun {
  /** The action's name: the hook's, with `-1`, `-2`… when the hook has several actions (as ECA). */
  name: string;
  hookType: HookType;
  /** Its block was shown in the chat. */
  visible: boolean;
  /** The JSON object it printed, only on exit 0 (ECA honours output fields only then). */
  parsed?: Record<string, unknown>;
}

export interface HooksEnv {
  hooks(): Record<string, HookConfig> | undefined;
  roots(): string[];
  /** The store's path (`db_cache_path`) and the executable patchbay runs as (`eca_executable`). */
  dbPath: string;
  executable: string;
  env: NodeJS.ProcessEnv;
  homeDir?: string;
  /**
   * Why a script the folder ships (a hook `file` relative to it) may not run: the folder is not
   * trusted (issue 16), or the script is new or changed since it was (issue 31); undefined: it may.
   */
  untrustedFile?(root: string, path: string): string | undefined;
  /** Bad hooks (a file that does not exist, a command not found, garbage output): workspace.board. */
  problems(list: string[]): void;
  /**
   * How a hook runs for a chat with these folders: in the OS sandbox (a hook from a workspace's
   * own config), refused (that, where the sandbox is required and cannot run), or as it is
   * (undefined, or a plan that is off: the user's own hooks, or no sandbox here under `auto`).
   */
  sandbox?(hook: string, roots: string[]): Promise<SandboxPlan | undefined>;
}

/** The chat a hook runs for: its fields of the input, and where its blocks are shown. */
export interface HookChat {
  chatId: string;
  agent?: string;
  model?: string;
  variant?: string;
  emit?: (e: ChatEvent) => void;
  /** The chat's folders (core/chat/chat-roots.ts): its hooks run in the first; unset: the workspace's. */
  roots?: string[];
}

export interface TriggerOptions {
  chat?: HookChat;
  /** Event fields (camelCase here; sent snake_case at the top level, nested values as they are). */
  data?: Record<string, unknown>;
  match?: MatchData;
  /** Tool hooks: the call a block belongs to (`toolCallId` on hookActionFinished). */
  toolCallId?: string;
  signal?: AbortSignal;
  /** After each action, before the next: e.g. preRequest's rewritten prompt is the next hook's `prompt`. */
  onRun?(run: HookRun): void;
}

export class Hooks {
  private readonly running = new Set<ChildProcess>();
  /** Set by killAll (shutdown): no hook starts after it, or it would outlive patchbay (its own process group). */
  private closed = false;
  /** A hook's last run went wrong: shown by doctor (and once in each chat) until it runs well. */
  private readonly runProblems = new Map<string, string>();
  private readonly sessionId = randomUUID();
  /** chatStart's additionalContext per chat: in its system prompt from then on (ECA `:startup-context`). */
  private readonly chatContexts = new Map<string, string>();

  constructor(private readonly env: HooksEnv) {}

  /** The configured hooks, by name (sorted: the order they run in). */
  list(): Array<[string, HookConfig]> {
    return Object.entries(this.env.hooks() ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** True when some hook listens for `type` (callers skip building an event's data otherwise). */
  has(type: HookType): boolean {
    return this.list().some(([, h]) => typeOf(h) === type);
  }

  /** Runs the matching hooks of `type`; resolves when all have ended (each bounded by its timeout). */
  async trigger(type: HookType, opts: TriggerOptions = {}): Promise<HookRun[]> {
    const runs: HookRun[] = [];
    for (const [name, hook] of this.list()) {
      if (typeOf(hook) !== type) continue;
      if (type === 'postToolCall' && opts.data?.error === true && !hook.runOnError) continue;
      if (!matches(type, hook.matcher, opts.match)) continue;
      for (const [i, action] of hook.actions.entries()) {
        if (this.closed) return runs;
        const actionName = hook.actions.length > 1 ? `${name}-${i + 1}` : name;
        const run = await this.runOne(type, name, actionName, hook, action, opts);
        runs.push(run);
        opts.onRun?.(run);
        if (run.exit === 0 && run.parsed?.continue === false) return runs;
      }
    }
    return runs;
  }

  private async runOne(type: HookType, key: string, name: string, hook: HookConfig, action: HookConfig['actions'][number], opts: TriggerOptions): Promise<HookRun> {
    const visible = hook.visible !== false && !NO_UI.has(type) && opts.chat?.emit !== undefined;
    const emit = opts.chat?.emit;
    const id = randomUUID();
    if (visible) emit?.({ type: 'hookActionStarted', id, name, actionType: 'shell' });
    const roots = opts.chat?.roots ?? this.env.roots();
    const cwd = roots[0];
    const input = JSON.stringify({ hook_name: name, hook_type: type, ...this.baseInput(roots, opts.chat), ...snakeKeys(opts.data ?? {}) });
    let result: ActionRun;
    const untrusted = cwd && action.file !== undefined ? this.untrustedFile(action.file, cwd) : undefined;
    if (!cwd) result = { exit: 1, stdout: '', stderr: 'Hook cannot run: no workspace folders' };
    else if (untrusted) {
      result = { exit: 1, stdout: '', stderr: untrusted };
      // A script changed while patchbay runs: the board (doctor, the chat's next notice) hears it now.
      this.publish();
    } else if (action.file !== undefined && !existsSync(this.filePath(action.file, cwd))) {
      result = { exit: 1, stdout: '', stderr: `Hook file not found: '${this.filePath(action.file, cwd)}' (relative paths resolve against the first workspace folder)` };
    } else {
      const plan = await this.env.sandbox?.(key, roots);
      if (plan?.kind === 'refuse') result = { exit: 1, stdout: '', stderr: `${REFUSED} it comes from the workspace's own config, which runs only in the OS sandbox, and ${plan.why}` };
      else result = await this.runAction(plan, type, action, hook, cwd, input, opts);
    }
    const { parsed, garbage } = result.exit === 0 && !result.truncated ? parseAnswer(result.stdout) : { parsed: undefined, garbage: false };
    const run: HookRun = { ...result, name, hookType: type, visible, ...(parsed ? { parsed } : {}) };
    this.noteProblem(key, run, garbage);
    if (visible) {
      const suppress = parsed?.suppressOutput === true;
      const output = suppress ? undefined : blockText(type, parsed, result.stdout);
      const error = suppress ? undefined : result.stderr.trim() || undefined;
      emit?.({
        type: 'hookActionFinished',
        id,
        name,
        actionType: 'shell',
        status: result.exit,
        ...(output ? { output } : {}),
        ...(error ? { error } : {}),
        ...(opts.toolCallId ? { toolCallId: opts.toolCallId } : {}),
      });
    } else if (emit && !NO_UI.has(type) && this.runProblems.has(key)) {
      // An invisible hook that failed is still said in the chat, or nobody would know.
      emit({ type: 'notice', text: this.runProblems.get(key)! });
    }
    const message = typeof parsed?.systemMessage === 'string' ? parsed.systemMessage.trim() : '';
    // ECA lifecycle.clj `hook-system-text`: the blank line after keeps it from running into the
    // answer the ECA plugins append after it.
    if (message && emit && !NO_UI.has(type)) emit({ type: 'notice', text: `Hook '${name}': ${message}\n\n` });
    return run;
  }

  private async runAction(
    plan: SandboxPlan | undefined,
    type: HookType,
    action: HookConfig['actions'][number],
    hook: HookConfig,
    cwd: string,
    input: string,
    opts: TriggerOptions,
  ): Promise<ActionRun> {
    const run = await runAction({
      script: action.shell !== undefined ? { shell: action.shell } : { file: this.filePath(action.file ?? '', cwd) },
      cwd,
      input,
      timeoutMs: action.timeout ?? hook.timeout ?? DEFAULT_HOOK_TIMEOUT_MS,
      // ECA_AGENT always, and the chat's id when a chat triggered it (core/tool-calls/agent-env.ts).
      env: withAgentEnv(opts.chat?.chatId, this.env.env),
      signal: opts.signal,
      track: { started: (c) => this.running.add(c), ended: (c) => this.running.delete(c) },
      ...(plan?.kind === 'sandboxed' ? { wrap: plan.wrap } : {}),
    });
    // A sandboxed hook that failed: say when it looks like the sandbox stopped it.
    if (plan?.kind !== 'sandboxed' || run.exit === 0 || run.exit === INTERVENE || run.timedOut) return run;
    const why = sandboxFailure(`${run.stderr}\n${run.stdout}`, plan.policy);
    return why ? { ...run, stderr: `${run.stderr.trimEnd()}\n(${type} hook from the workspace's config, run in the OS sandbox: ${why})` } : run;
  }

  /** ECA's base input (hooks.clj `base-hook-data`, `chat-hook-data`). */
  private baseInput(roots: string[], chat: HookChat | undefined): Record<string, unknown> {
    return {
      workspaces: roots,
      cwd: roots[0] ?? null,
      db_cache_path: this.env.dbPath,
      session_id: this.sessionId,
      eca_executable: this.env.executable,
      ...(chat
        ? {
            ...(chat.model ? { full_model: chat.model } : {}),
            ...(chat.variant ? { variant: chat.variant } : {}),
            chat_id: chat.chatId,
            agent: chat.agent ?? null,
            behavior: chat.agent ?? null,
          }
        : {}),
    };
  }

  /** Why a relative hook file is not run: a workspace folder the user has not trusted, or a script changed since. */
  private untrustedFile(file: string, cwd: string): string | undefined {
    if (file === '~' || file.startsWith('~/') || isAbsolute(file) || !this.env.untrustedFile) return undefined;
    const path = this.filePath(file, cwd);
    // A missing file is told as such (below).
    if (!existsSync(path)) return undefined;
    const why = this.env.untrustedFile(cwd, path);
    return why === undefined ? undefined : `${UNTRUSTED_FILE} '${path}' is ${why} (trust the folder with /trust in a chat or \`patchbay trust ${cwd}\`)`;
  }

  private filePath(file: string, cwd: string): string {
    const expanded = file === '~' || file.startsWith('~/') ? join(this.env.homeDir ?? homedir(), file.slice(1)) : file;
    return isAbsolute(expanded) ? expanded : join(cwd, expanded);
  }

  private noteProblem(key: string, run: HookRun, garbage: boolean): void {
    const why = run.timedOut
      ? `timed out and was killed: ${run.stderr}`
      : run.exit === 127
        ? `its command was not found (exit 127): ${firstLine(run.stderr)}`
        : run.stderr.startsWith('Hook could not start')
          ? run.stderr
          : // Said once by publish() while the file is missing or untrusted, not for each run.
            run.stderr.startsWith('Hook file not found') || run.stderr.startsWith(UNTRUSTED_FILE)
            ? undefined
            : run.truncated
              ? `printed more than ${MAX_STDOUT_CHARS / 1024 / 1024} MB: the rest was cut, so its answer was not used`
              : garbage
                ? `printed output that is not a JSON object: ${firstLine(run.stdout)}`
                : run.exit !== 0 && run.exit !== INTERVENE
                  ? `failed (exit ${run.exit})${run.stderr.trim() ? `: ${firstLine(run.stderr)}` : ''}`
                  : undefined;
    const before = this.runProblems.get(key);
    if (why) {
      log.warn(`hook ${run.name} (${run.hookType}): ${why}`);
      this.runProblems.set(key, `hooks: "${run.name}" (${run.hookType}) ${why}`);
    } else this.runProblems.delete(key);
    if (before !== this.runProblems.get(key)) this.publish();
  }

  /** Tells the board what is wrong now: files that do not exist, and hooks whose last run failed. */
  publish(): void {
    const cwd = this.env.roots()[0];
    const missing = this.list().flatMap(([name, hook]) =>
      hook.actions.flatMap((a) => {
        if (a.file === undefined || !cwd) return [];
        const untrusted = this.untrustedFile(a.file, cwd);
        if (untrusted) return [`hooks: "${name}": ${untrusted}`];
        return existsSync(this.filePath(a.file, cwd)) ? [] : [`hooks: "${name}": file ${this.filePath(a.file, cwd)} does not exist`];
      }),
    );
    const badMatchers = this.list().flatMap(([name, hook]) =>
      badPatterns(typeOf(hook), hook.matcher).map((p) => `hooks: "${name}": matcher ${JSON.stringify(p)} is not a valid regular expression, so the hook never runs`),
    );
    const configured = new Set(this.list().map(([name]) => name));
    for (const key of this.runProblems.keys()) if (!configured.has(key)) this.runProblems.delete(key);
    this.env.problems([...missing, ...badMatchers, ...this.runProblems.values()]);
  }

  /** `/hooks` (ECA commands.clj `hooks-msg`): the hooks grouped by type, in ECA's order. */
  listText(): string {
    const hooks = this.list();
    if (!hooks.length) return 'No hooks configured. Add hooks to your config under the `hooks` key.';
    let out = 'Hooks active:\n\n';
    for (const type of HOOK_TYPES) {
      const of = hooks.filter(([, h]) => typeOf(h) === type);
      if (!of.length) continue;
      out += `**${type}**\n`;
      for (const [name, h] of of) {
        const matcher = h.matcher === undefined ? '' : ` matcher: \`${typeof h.matcher === 'string' ? h.matcher : JSON.stringify(h.matcher)}\``;
        out += `- \`${name}\`${h.description ? ` — ${h.description}` : ''}${h.visible === false ? ' *(hidden)*' : ''}${matcher}\n`;
      }
      out += '\n';
    }
    return out;
  }

  /** `doctor`'s lines; a hook file created or removed since is noticed here (doctor reads the problems next). */
  summary(): string[] {
    this.publish();
    const hooks = this.list();
    if (!hooks.length) return ['Hooks: none'];
    return [`Hooks (${hooks.length}): ${hooks.map(([name, h]) => `${name} (${typeOf(h)})`).join(', ')}`];
  }

  setChatContext(chatId: string, text: string | undefined): void {
    if (text) this.chatContexts.set(chatId, text);
    else this.chatContexts.delete(chatId);
  }

  chatContext(chatId: string): string | undefined {
    return this.chatContexts.get(chatId);
  }

  /** Kills every hook process still running, and starts none from now on (shutdown). */
  killAll(): void {
    this.closed = true;
    for (const child of this.running) killGroup(child, 'SIGKILL');
  }
}

/** ECA's legacy names (hooks.clj `hook-matches?`). */
export function typeOf(hook: HookConfig): HookType {
  return hook.type === 'prePrompt' ? 'preRequest' : hook.type === 'postPrompt' ? 'postRequest' : hook.type;
}

/**
 * The answer on exit 0: a JSON object, or plain text (display only, as ECA). Output that looks
 * like JSON and is not a JSON object is garbage: reported, and used as plain text.
 */
export function parseAnswer(stdout: string): { parsed?: Record<string, unknown>; garbage: boolean } {
  const text = stdout.trim();
  if (!text) return { garbage: false };
  try {
    const v: unknown = JSON.parse(text);
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return { parsed: v as Record<string, unknown>, garbage: false };
    return { garbage: true };
  } catch {
    return { garbage: text.startsWith('{') || text.startsWith('[') };
  }
}

function snakeKeys(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v]));
}

function firstLine(s: string): string {
  const line = s.trim().split('\n')[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
