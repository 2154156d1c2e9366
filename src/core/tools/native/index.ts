/** patchbay's native tools: the ones the LLM sees as `patchbay__<name>`. */
import type { Tool } from '../../../shapes/tool.js';
import { directoryTreeTool } from './directory-tree.js';
import { editFileTool } from './edit-file.js';
import { editorDiagnosticsTool } from './editor-diagnostics.js';
import { grepTool } from './grep.js';
import { moveFileTool } from './move-file.js';
import { readFileTool } from './read-file.js';
import { shellCommandTool } from './shell-command.js';
import { writeFileTool } from './write-file.js';
import { readEventStreamTool } from './read-event-stream.js';
import { taskTool } from './task.js';
import type { TaskLists } from './task-lists.js';
import type { EventStreamStore } from '../../../shapes/event-stream.js';
import type { AskUser } from '../../../shapes/ask.js';
import { askUserTool } from './ask-user.js';
import { bgJobTool } from './bg-job.js';
import type { JobRegistry } from '../../jobs/registry.js';

export interface NativeToolsOptions {
  /** Default `shell_command` timeout in seconds (the model may pass its own). */
  shellTimeoutSeconds?: number;
  /** Characters of `shell_command` output kept before the middle is cut. */
  maxOutputChars?: number;
  /** Where `read_event_stream` reads from; without it the tool is not offered. */
  events?: EventStreamStore;
  /** How to ask the user a question; without it `ask_user` is not offered. */
  ask?: AskUser;
  /** Where `task` keeps each chat's list; in memory without it. */
  taskLists?: TaskLists;
  /** Where background jobs live; without it `shell_command` refuses `background` and `bg_job` is not offered. */
  jobs?: JobRegistry;
  /** The environment `shell_command` starts from (the host's); the process's own without it. */
  env?: NodeJS.ProcessEnv;
}

export function nativeTools(opts: NativeToolsOptions = {}): Tool[] {
  return [
    readFileTool(),
    directoryTreeTool(),
    grepTool(),
    writeFileTool(),
    editFileTool(),
    moveFileTool(),
    shellCommandTool({ shellTimeoutSeconds: opts.shellTimeoutSeconds, maxOutputChars: opts.maxOutputChars, jobs: opts.jobs, env: opts.env }),
    editorDiagnosticsTool(),
    taskTool(opts.taskLists),
    ...(opts.events ? [readEventStreamTool(opts.events)] : []),
    ...(opts.ask ? [askUserTool(opts.ask)] : []),
    ...(opts.jobs ? [bgJobTool(opts.jobs, opts.maxOutputChars)] : []),
  ];
}

export { defineNativeTool, type NativeToolSpec } from '../../../shapes/define-tool.js';
export { directoryTreeTool, directoryTreeSchema, DEFAULT_TREE_ENTRIES } from './directory-tree.js';
export { editFileTool, editFileSchema, planEdit } from './edit-file.js';
export { editorDiagnosticsTool, editorDiagnosticsSchema, formatDiagnostic } from './editor-diagnostics.js';
export { grepTool, grepSchema, DEFAULT_GREP_RESULTS, MAX_GREP_FILE_BYTES } from './grep.js';
export { moveFileTool, moveFileSchema } from './move-file.js';
export { readFileTool, readFileSchema, DEFAULT_READ_LINES, MAX_READ_CHARS } from './read-file.js';
export { shellCommandTool, shellCommandSchema, type ShellCommandOptions, DEFAULT_SHELL_TIMEOUT_SECONDS, DEFAULT_MAX_OUTPUT_CHARS, INITIAL_OUTPUT_WAIT_MS } from './shell-command.js';
export { runShell, spawnShell, OutputBuffer, KILL_GRACE_MS, type ShellRun, type ShellRunOptions } from './shell.js';
export { writeFileTool, writeFileSchema } from './write-file.js';
export { readEventStreamTool, readEventStreamSchema } from './read-event-stream.js';
export { askUserTool, askUserSchema } from './ask-user.js';
export { bgJobTool, bgJobSchema } from './bg-job.js';
export { taskTool, taskSchema } from './task.js';
export { clearsAtNextPrompt, memoryTaskLists, storedTaskLists, type TaskLists } from './task-lists.js';
