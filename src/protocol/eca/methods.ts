/**
 * Every ECA method patchbay serves or sends (specs/eca-protocol.md), one entry each: its name,
 * which way it goes, whether it is a request or a notification, and the schemas of its params
 * and (for requests) its result. The server registers its handlers from this table, the
 * `patchbay chat` client and the tests name methods through it, so a method is spelt once.
 */
import { z } from 'zod';
import {
  chatClearParamsSchema,
  chatClearedSchema,
  chatDeleteParamsSchema,
  chatUpdateParamsSchema,
  chatDeletedSchema,
  chatListParamsSchema,
  chatListResultSchema,
  chatOpenParamsSchema,
  chatOpenResultSchema,
  chatOpenedSchema,
  chatPromptParamsSchema,
  chatPromptResultSchema,
  chatStatusChangedSchema,
  emptyResultSchema,
  promptSteerParamsSchema,
  promptSteerRemoveParamsSchema,
  promptStopParamsSchema,
  queryCommandsParamsSchema,
  queryCommandsResultSchema,
  queryContextParamsSchema,
  queryFilesParamsSchema,
  queryFilesResultSchema,
  selectedAgentChangedSchema,
  selectedBehaviorChangedSchema,
  selectedModelChangedSchema,
  toolCallApproveParamsSchema,
  toolCallRejectParamsSchema,
} from './chat.js';
import { askQuestionParamsSchema, askQuestionResultSchema } from './ask.js';
import { completionInlineParamsSchema, completionInlineResultSchema, rewriteContentReceivedSchema, rewritePromptParamsSchema, rewritePromptResultSchema } from './assist.js';
import { contentReceivedSchema } from './content.js';
import { queryContextResultSchema } from './context.js';
import { chatAddFlagParamsSchema, chatRemoveFlagParamsSchema } from './flags.js';
import { chatInlinePromptParamsSchema } from './inline.js';
import {
  jobParamsSchema,
  jobsKillResultSchema,
  jobsListParamsSchema,
  jobsListResultSchema,
  jobsReadOutputResultSchema,
  providersListParamsSchema,
  providersListResultSchema,
  providersLoginInputParamsSchema,
  providersLoginInputResultSchema,
  providersLoginParamsSchema,
  providersLoginResultSchema,
  providersLogoutParamsSchema,
  providersLogoutResultSchema,
  providerStatusSchema,
} from './settings.js';
import {
  mcpAddServerParamsSchema,
  mcpAddServerResultSchema,
  mcpRemoveServerParamsSchema,
  mcpRemoveServerResultSchema,
  mcpUpdateServerParamsSchema,
  mcpUpdateServerResultSchema,
  toolServerRemovedSchema,
} from './mcp-manage.js';
import { chatForkParamsSchema, chatForkResultSchema, chatHistoryParamsSchema, chatHistoryResultSchema } from './history.js';
import { chatRollbackParamsSchema, chatRollbackResultSchema } from './rollback.js';
import { memoryIndexLoadedSchema, memoryListParamsSchema, memoryListResultSchema } from './memory.js';
import {
  configUpdatedSchema,
  didChangeWorkspaceFoldersParamsSchema,
  getDiagnosticsParamsSchema,
  getDiagnosticsResultSchema,
  initializeParamsSchema,
  initializeResultSchema,
  mcpServerParamsSchema,
  progressSchema,
  showMessageSchema,
  toolServerUpdatedSchema,
} from './lifecycle.js';

export type Direction = 'clientToServer' | 'serverToClient';

export interface EcaRequestType<M extends string = string, P extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType, D extends Direction = Direction> {
  readonly kind: 'request';
  readonly method: M;
  readonly direction: D;
  readonly params: P;
  readonly result: R;
}

export interface EcaNotificationType<M extends string = string, P extends z.ZodType = z.ZodType, D extends Direction = Direction> {
  readonly kind: 'notification';
  readonly method: M;
  readonly direction: D;
  readonly params: P;
}

export type EcaMethodType = EcaRequestType | EcaNotificationType;

function request<const M extends string, const D extends Direction, P extends z.ZodType, R extends z.ZodType>(method: M, direction: D, params: P, result: R): EcaRequestType<M, P, R, D> {
  return { kind: 'request', method, direction, params, result };
}

function notification<const M extends string, const D extends Direction, P extends z.ZodType>(method: M, direction: D, params: P): EcaNotificationType<M, P, D> {
  return { kind: 'notification', method, direction, params };
}

/** Params patchbay does not read (`initialized {}`, `shutdown`, `exit`). */
const ignoredParamsSchema = z.unknown();

const toServer = 'clientToServer' as const;
const toClient = 'serverToClient' as const;

export const ECA = {
  // Lifecycle (specs/eca-protocol.md "Lifecycle Messages").
  initialize: request('initialize', toServer, initializeParamsSchema, initializeResultSchema),
  initialized: notification('initialized', toServer, ignoredParamsSchema),
  shutdown: request('shutdown', toServer, ignoredParamsSchema, z.null()),
  exit: notification('exit', toServer, ignoredParamsSchema),
  workspaceDidChangeWorkspaceFolders: notification('workspace/didChangeWorkspaceFolders', toServer, didChangeWorkspaceFoldersParamsSchema),

  // Chat, editor → patchbay ("Code Assistant Features").
  chatPrompt: request('chat/prompt', toServer, chatPromptParamsSchema, chatPromptResultSchema),
  chatInlinePrompt: request('chat/inlinePrompt', toServer, chatInlinePromptParamsSchema, chatPromptResultSchema),
  chatToolCallApprove: notification('chat/toolCallApprove', toServer, toolCallApproveParamsSchema),
  chatToolCallReject: notification('chat/toolCallReject', toServer, toolCallRejectParamsSchema),
  chatPromptStop: notification('chat/promptStop', toServer, promptStopParamsSchema),
  chatPromptSteer: notification('chat/promptSteer', toServer, promptSteerParamsSchema),
  chatPromptSteerRemove: notification('chat/promptSteerRemove', toServer, promptSteerRemoveParamsSchema),
  chatDelete: request('chat/delete', toServer, chatDeleteParamsSchema, emptyResultSchema),
  chatUpdate: request('chat/update', toServer, chatUpdateParamsSchema, emptyResultSchema),
  chatClear: request('chat/clear', toServer, chatClearParamsSchema, emptyResultSchema),
  chatQueryContext: request('chat/queryContext', toServer, queryContextParamsSchema, queryContextResultSchema),
  chatQueryCommands: request('chat/queryCommands', toServer, queryCommandsParamsSchema, queryCommandsResultSchema),
  chatQueryFiles: request('chat/queryFiles', toServer, queryFilesParamsSchema, queryFilesResultSchema),
  chatSelectedBehaviorChanged: notification('chat/selectedBehaviorChanged', toServer, selectedBehaviorChangedSchema),
  chatSelectedAgentChanged: notification('chat/selectedAgentChanged', toServer, selectedAgentChangedSchema),
  chatSelectedModelChanged: notification('chat/selectedModelChanged', toServer, selectedModelChangedSchema),
  /** patchbay extensions: stored chats. */
  chatList: request('chat/list', toServer, chatListParamsSchema, chatListResultSchema),
  chatOpen: request('chat/open', toServer, chatOpenParamsSchema, chatOpenResultSchema),
  chatHistory: request('chat/history', toServer, chatHistoryParamsSchema, chatHistoryResultSchema),
  chatFork: request('chat/fork', toServer, chatForkParamsSchema, chatForkResultSchema),
  chatAddFlag: request('chat/addFlag', toServer, chatAddFlagParamsSchema, emptyResultSchema),
  chatRemoveFlag: request('chat/removeFlag', toServer, chatRemoveFlagParamsSchema, emptyResultSchema),
  chatRollback: request('chat/rollback', toServer, chatRollbackParamsSchema, chatRollbackResultSchema),
  mcpStartServer: notification('mcp/startServer', toServer, mcpServerParamsSchema),
  mcpStopServer: notification('mcp/stopServer', toServer, mcpServerParamsSchema),
  // The MCP panel's management (./mcp-manage.ts).
  mcpAddServer: request('mcp/addServer', toServer, mcpAddServerParamsSchema, mcpAddServerResultSchema),
  mcpUpdateServer: request('mcp/updateServer', toServer, mcpUpdateServerParamsSchema, mcpUpdateServerResultSchema),
  mcpRemoveServer: request('mcp/removeServer', toServer, mcpRemoveServerParamsSchema, mcpRemoveServerResultSchema),
  mcpEnableServer: notification('mcp/enableServer', toServer, mcpServerParamsSchema),
  mcpDisableServer: notification('mcp/disableServer', toServer, mcpServerParamsSchema),
  mcpConnectServer: notification('mcp/connectServer', toServer, mcpServerParamsSchema),
  mcpLogoutServer: notification('mcp/logoutServer', toServer, mcpServerParamsSchema),
  // The settings panels (./settings.ts).
  providersList: request('providers/list', toServer, providersListParamsSchema, providersListResultSchema),
  providersLogin: request('providers/login', toServer, providersLoginParamsSchema, providersLoginResultSchema),
  providersLoginInput: request('providers/loginInput', toServer, providersLoginInputParamsSchema, providersLoginInputResultSchema),
  providersLogout: request('providers/logout', toServer, providersLogoutParamsSchema, providersLogoutResultSchema),
  jobsList: request('jobs/list', toServer, jobsListParamsSchema, jobsListResultSchema),
  jobsKill: request('jobs/kill', toServer, jobParamsSchema, jobsKillResultSchema),
  jobsReadOutput: request('jobs/readOutput', toServer, jobParamsSchema, jobsReadOutputResultSchema),
  // Durable memory (./memory.ts).
  memoryList: request('memory/list', toServer, memoryListParamsSchema, memoryListResultSchema),
  // Inline completion and rewrite (./assist.ts).
  completionInline: request('completion/inline', toServer, completionInlineParamsSchema, completionInlineResultSchema),
  rewritePrompt: request('rewrite/prompt', toServer, rewritePromptParamsSchema, rewritePromptResultSchema),

  // patchbay → editor.
  chatContentReceived: notification('chat/contentReceived', toClient, contentReceivedSchema),
  chatStatusChanged: notification('chat/statusChanged', toClient, chatStatusChangedSchema),
  rewriteContentReceived: notification('rewrite/contentReceived', toClient, rewriteContentReceivedSchema),
  chatOpened: notification('chat/opened', toClient, chatOpenedSchema),
  chatCleared: notification('chat/cleared', toClient, chatClearedSchema),
  chatDeleted: notification('chat/deleted', toClient, chatDeletedSchema),
  configUpdated: notification('config/updated', toClient, configUpdatedSchema),
  providersUpdated: notification('providers/updated', toClient, providerStatusSchema),
  toolServerUpdated: notification('tool/serverUpdated', toClient, toolServerUpdatedSchema),
  toolServerRemoved: notification('tool/serverRemoved', toClient, toolServerRemovedSchema),
  showMessage: notification('$/showMessage', toClient, showMessageSchema),
  progress: notification('$/progress', toClient, progressSchema),
  editorGetDiagnostics: request('editor/getDiagnostics', toClient, getDiagnosticsParamsSchema, getDiagnosticsResultSchema),
  chatAskQuestion: request('chat/askQuestion', toClient, askQuestionParamsSchema, askQuestionResultSchema),
  jobsUpdated: notification('jobs/updated', toClient, jobsListResultSchema),
  memoryIndexLoaded: notification('memory/indexLoaded', toClient, memoryIndexLoadedSchema),
} as const satisfies Record<string, EcaMethodType>;

type Table = typeof ECA;
export type EcaMethod = Table[keyof Table];
export type EcaMethodName = EcaMethod['method'];
/** Requests an editor sends and patchbay answers. */
export type ClientRequest = Extract<EcaMethod, { kind: 'request'; direction: 'clientToServer' }>;
export type ClientNotification = Extract<EcaMethod, { kind: 'notification'; direction: 'clientToServer' }>;
/** Notifications patchbay sends the editor. */
export type ServerNotification = Extract<EcaMethod, { kind: 'notification'; direction: 'serverToClient' }>;

export const ECA_METHODS: readonly EcaMethod[] = Object.values(ECA);
