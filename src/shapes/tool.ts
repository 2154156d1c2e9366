/**
 * The internal Tool shape (ARCHITECTURE.md "The one idea"): every peer's tools
 * — native, MCP, gateway providers, LSP-backed — are adapted into this.
 */
import type { SandboxPlan } from '../util/sandbox.js';
import { z } from 'zod';

/** A JSON Schema object, as sent to the LLM. */
export type JsonSchema = Record<string, unknown>;

/** ECA `FileChangeDetails`, shown by editors as a diff. Stored with tool-call messages. */
export const fileChangeDetailsSchema = z.object({
  type: z.literal('fileChange'),
  path: z.string(),
  diff: z.string(),
  linesAdded: z.number(),
  linesRemoved: z.number(),
});
export type FileChangeDetails = z.infer<typeof fileChangeDetailsSchema>;

/**
 * A `shell_command` call that started a background job: the plugins mark the call and link it
 * to its job (ECA shell.clj `tool-call-details-before-invocation`: `background true`). ECA's
 * per-command breakdown (`commands`, for "approve & remember") is not made here: always empty.
 */
export const shellCommandDetailsSchema = z.object({
  type: z.literal('shellCommand'),
  commands: z.array(z.object({ command: z.string(), args: z.array(z.string()) })),
  background: z.boolean().optional(),
});
export type ShellCommandDetails = z.infer<typeof shellCommandDetailsSchema>;

/** One entry of a chat's task list (the `task` tool). */
export const taskItemSchema = z.object({
  id: z.number().int(),
  subject: z.string(),
  description: z.string(),
  status: z.enum(['pending', 'inProgress', 'done']),
  priority: z.enum(['high', 'medium', 'low']),
  /** Ids of the tasks that must be done first (empty when none). */
  blockedBy: z.array(z.number().int()),
  /** Some task in `blockedBy` is not done yet. */
  isBlocked: z.boolean(),
});
export type TaskItem = z.infer<typeof taskItemSchema>;

/** A chat's whole task list after a `task` call, for front ends to render as a checklist. */
export const taskDetailsSchema = z.object({
  type: z.literal('task'),
  tasks: z.array(taskItemSchema),
  /** What the model said it is working on; absent when no task is in progress. */
  activeSummary: z.string().optional(),
  /** The id the next added task gets (ids of deleted tasks are not reused). */
  nextId: z.number().int().optional(),
});
export type TaskDetails = z.infer<typeof taskDetailsSchema>;

/**
 * A `spawn_agent` call: the child chat it runs in and how far it got, so a front end can nest the
 * child's contents (they carry `parentChatId`) under this call (ECA docs/protocol.md "SubagentDetails").
 */
export const subagentDetailsSchema = z.object({
  type: z.literal('subagent'),
  subagentChatId: z.string().optional(),
  model: z.string(),
  variant: z.string().optional(),
  agentName: z.string(),
  maxSteps: z.number().int().optional(),
  step: z.number().int(),
});
export type SubagentDetails = z.infer<typeof subagentDetailsSchema>;

/** What a tool call carries beside its outputs for a front end to show. Stored with tool-call messages. */
export const toolDetailsSchema = z.discriminatedUnion('type', [fileChangeDetailsSchema, taskDetailsSchema, shellCommandDetailsSchema, subagentDetailsSchema]);
export type ToolDetails = z.infer<typeof toolDetailsSchema>;

/** One piece of what a tool returns to the model. */
export const toolOutputSchema = z.discriminatedUnion('type', [z.object({ type: z.literal('text'), text: z.string() }), z.object({ type: z.literal('image'), data: z.string(), mimeType: z.string() })]);
export type ToolOutput = z.infer<typeof toolOutputSchema>;

/** A tool's outcome. A failure is a result the model reads (`error: true`), never a throw. */
export interface ToolResult {
  error: boolean;
  outputs: ToolOutput[];
  details?: ToolDetails;
}

/** What the editor can do for a tool (server → client requests). */
export interface EditorBridge {
  /** `editor/getDiagnostics`; undefined when the client did not declare the capability. */
  getDiagnostics?: (uri?: string) => Promise<EditorDiagnostic[]>;
  /**
   * The editor's text of a file, its unsaved changes included (ACP `fs/read_text_file`); unset when
   * the client cannot. `path` is absolute and was already checked (containment, protected paths) on
   * disk: the editor is asked only for what the tool could have read itself.
   */
  readTextFile?: (req: EditorFileRead) => Promise<string>;
  /** Writes a file through the editor (ACP `fs/write_text_file`), so its open buffers follow; same checks first. */
  writeTextFile?: (req: EditorFileWrite) => Promise<void>;
  /**
   * Runs a command in a terminal the editor shows (ACP `terminal/*`); unset when the client has none.
   * Always settles; the signal kills the command (and releases the terminal).
   */
  runInTerminal?: (req: TerminalRunRequest) => Promise<TerminalRunResult>;
}

/** Who asks the editor: the chat (a subagent's chat too) and the tool call, for the editor to place the request. */
export interface EditorRequestScope {
  chatId: string;
  toolCallId?: string;
  signal: AbortSignal;
}

export interface EditorFileRead extends EditorRequestScope {
  path: string;
}

export interface EditorFileWrite extends EditorRequestScope {
  path: string;
  content: string;
}

export interface TerminalRunRequest extends EditorRequestScope {
  /** The program and its arguments (a shell line runs as the shell with `-c`). */
  command: string;
  args: string[];
  cwd: string;
  env?: Record<string, string>;
  /** Output beyond this many bytes is dropped from the start (the editor keeps the end). */
  outputByteLimit: number;
  timeoutMs: number;
}

export interface TerminalRunResult {
  output: string;
  truncated: boolean;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  /** The terminal could not be created or read: why (the tool says so instead of running). */
  error?: string;
}

export interface EditorDiagnostic {
  uri: string;
  severity: 'error' | 'warning' | 'info' | 'hint';
  source?: string;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  code?: string;
  message: string;
}

/**
 * What a file tool records of one path it changed, so `chat/rollback` can undo it: the bytes
 * before (null: the path did not exist) and a hash of the bytes after (null: gone after the
 * call), to tell a later hand edit from the tool's own. `skipped` says why the bytes before were
 * not kept (a file past the size limit, a directory): such a path is reported, never restored.
 */
export interface FileCheckpoint {
  path: string;
  before: Buffer | null;
  afterHash: string | null;
  skipped?: string;
  /**
   * The real path of the file's folder when the change was made: a rollback leaves the file alone
   * when a folder on its path has become a symbolic link since (it would write elsewhere).
   */
  folder?: string;
}

export interface ToolContext {
  /** Aborted on promptStop, chat delete or shutdown. */
  signal: AbortSignal;
  /** Absolute paths of the workspace folders; the first is the default for relative paths. */
  roots: string[];
  chatId: string;
  /** The id of the call being run (as the front end and the model know it). */
  toolCallId?: string;
  /**
   * File tools must keep every file they open inside `roots`, checked on what they actually open
   * (tools/contained.ts). false only when the user was asked about, and approved, a call that
   * touches paths outside the workspace. Unset means true.
   */
  confined?: boolean;
  /**
   * Set when the call was not approved for a protected path (core/tool-calls/protected-paths.ts): why writing
   * this real path would have needed that approval, checked on what is really opened (a symlink
   * may have changed since the call was judged).
   */
  guardProtected?: (realPath: string) => Promise<string | undefined>;
  editor: EditorBridge;
  /** Whether and how this chat's commands run in the OS sandbox (runtime/sandbox.ts); unset: they run unsandboxed. */
  sandbox?: () => Promise<SandboxPlan>;
  /** Report progress of a long call; shown in the chat. */
  progress?: (text: string) => void;
  /** Called by file tools after each change they make (see FileCheckpoint); unset: not recorded. */
  recordChange?: (change: FileCheckpoint) => void;
  /** New details for the running call (a subagent's step): the front end is told the call runs on, with them. */
  setDetails?: (details: ToolDetails) => void;
}

export interface Tool {
  /** Bare name, e.g. `read_file`. The LLM sees `<server>__<name>`. */
  name: string;
  /** `patchbay` for native tools; the MCP server's or provider's name otherwise. */
  server: string;
  origin: 'native' | 'mcp' | (string & {});
  description: string;
  inputSchema: JsonSchema;
  /** Read-only tools are allowed by default; the rest ask. */
  readOnly: boolean;
  /** Writes files or runs commands: hidden from the `plan` agent. */
  mutates: boolean;
  /**
   * Runs commands in the OS sandbox (`shell_command`): with `sandbox.autoAllow` a call that would
   * ask runs there unasked, and one with `"sandbox": false` always asks (core/tool-calls/tool-gate.ts).
   */
  sandboxed?: boolean;
  /** For a tool that `mutates` only with some arguments (`bg_job` `kill`): the `plan` agent may not make this call. */
  mutatesCall?(args: Record<string, unknown>): boolean;
  /** Short human text, e.g. `Reading file "a.ts"`. */
  summary?(args: Record<string, unknown>): string | undefined;
  /** Paths the call touches (raw, as given by the LLM) for the workspace-escape check. */
  paths?(args: Record<string, unknown>): string[];
  /** Details to show before running (e.g. the diff an edit would make). Must not change anything. */
  preview?(args: Record<string, unknown>, ctx: ToolContext): Promise<FileChangeDetails | undefined>;
  /** Details known before the call runs, shown with its announcement (a subagent's chat id and model). */
  detailsBefore?(args: Record<string, unknown>, call: { chatId: string; toolCallId: string }): ToolDetails | undefined;
  /**
   * Calls of this tool made in one model step may run at the same time (at most `limit()` at once);
   * the model still reads the results in the order it made the calls.
   */
  parallel?: { limit(): number };
  /**
   * How the tool is offered to a model whose context window is under SMALL_CONTEXT_TOKENS, so a
   * small model's prompt leaves room for the conversation: `false` leaves it out (subagents,
   * background jobs, language-server tools), an object offers it with that shorter description and
   * schema (`shell_command` without `background`). Unset: offered as it is.
   */
  smallContext?: false | SmallContextView;
  call(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}

/**
 * A model whose context window (ModelEntry `limit.context`) is under this many tokens is offered
 * fewer tools (Tool.smallContext): their definitions alone would fill a third of an 8k window.
 */
export const SMALL_CONTEXT_TOKENS = 16_384;

/** What a small-context model sees of a tool instead of its full description and schema. */
export interface SmallContextView {
  description: string;
  inputSchema: JsonSchema;
}

export function textResult(text: string, error = false): ToolResult {
  return { error, outputs: [{ type: 'text', text }] };
}
