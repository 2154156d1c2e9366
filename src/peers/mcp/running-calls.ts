/**
 * The tools/call requests one MCP session has in flight, and the chats they run for: an
 * `elicitation/create` from the server is put to the user of the call it belongs to.
 *
 * Which call a server request belongs to is not on the wire over stdio (the SDK's
 * `relatedRequestId` only picks the HTTP stream), so the newest call still running on this server
 * is taken: with one call at a time, the usual case, that is exactly the call that asks. A request
 * that arrives while no call runs (no chat to ask in) is declined.
 */
import { ErrorCode, McpError, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { AskUser } from '../../shapes/ask.js';
import type { ToolContext } from '../../shapes/tool.js';
import { errorMessage, type Logger } from '../../util/log.js';
import { elicitForm } from './elicit.js';

interface Running {
  chatId: string;
  toolCallId?: string;
  /** The call's own signal: aborts when its turn stops or its chat is deleted. */
  turn: AbortSignal;
  /**
   * Aborts when the call ends. Made only when a question is asked: every call pays for the map
   * entry alone (an AbortSignal.any and an Error per call cost a tool call tens of microseconds).
   */
  ended?: AbortController;
  /** Stops the call's timeout while the user is asked; returns the release. Set by the call path. */
  hold?: () => () => void;
}

/** A call as its call path sees it: `end` when it settles, `hold` for elicit to pause its clock. */
export interface RunningCall {
  end(): void;
  hold?: () => () => void;
}

const CALL_ENDED = new Error('the tool call ended');

export class RunningCalls {
  private seq = 0;
  /** In start order (Map keeps insertion order): the newest is last. */
  private readonly calls = new Map<number, Running>();

  /** Records a call; its `end()` (on settling) withdraws its open questions. */
  add(ctx: Pick<ToolContext, 'chatId' | 'toolCallId' | 'signal'>): RunningCall {
    const id = ++this.seq;
    const running: Running = { chatId: ctx.chatId, ...(ctx.toolCallId ? { toolCallId: ctx.toolCallId } : {}), turn: ctx.signal };
    this.calls.set(id, running);
    return {
      end: () => {
        this.calls.delete(id);
        running.ended?.abort(CALL_ENDED);
      },
      set hold(h: (() => () => void) | undefined) {
        running.hold = h;
      },
      get hold() {
        return running.hold;
      },
    };
  }

  private newest(): Running | undefined {
    return [...this.calls.values()].at(-1);
  }

  /**
   * The answer to `elicitation/create`. Never rejects except with an McpError for a request we
   * cannot take (URL mode, a bad schema): the user dismissing, the turn stopping, the call ending
   * or the server cancelling its request all answer `cancel`; a front end that fails to ask, `decline`.
   */
  async elicit(server: string, params: ElicitRequest['params'], ask: AskUser, requestSignal: AbortSignal, log: Logger): Promise<ElicitResult> {
    if (params.mode === 'url') throw new McpError(ErrorCode.InvalidParams, 'patchbay supports form-mode elicitation only');
    const call = this.newest();
    if (!call) {
      log.warn(`declined elicitation/create: no tool call of this server is running, so there is no chat to ask in`);
      return { action: 'decline' };
    }
    call.ended ??= new AbortController();
    const signal = AbortSignal.any([call.turn, call.ended.signal, requestSignal]);
    // The call cannot finish while its server waits on the user: its timeout waits too.
    const release = call.hold?.();
    try {
      return await elicitForm(server, params, (q) => {
        if (signal.aborted) return Promise.reject(new Error('withdrawn'));
        return ask(call.chatId, { ...q, ...(call.toolCallId ? { toolCallId: call.toolCallId } : {}) }, signal);
      });
    } catch (e) {
      if (e instanceof McpError) throw e;
      if (signal.aborted) return { action: 'cancel' };
      log.warn(`declined elicitation/create: asking the user failed: ${errorMessage(e)}`);
      return { action: 'decline' };
    } finally {
      release?.();
    }
  }
}
