/**
 * The ECA editor as the workspace's way to ask the user (shapes/ask.ts): `chat/askQuestion`,
 * offered only when the client declared `capabilities.codeAssistant.chatCapabilities.askQuestion`
 * in `initialize` (ECA src/eca/features/tools/ask_user.clj `:enabled-fn`; eca-emacs eca.el
 * declares it). A stopped turn aborts the signal, so the editor gets `$/cancelRequest`.
 */
import type { MessageConnection } from 'vscode-jsonrpc';
import { request, RequestError } from '../../rpc/request.js';
import type { InitializeParams } from '../../protocol/eca/lifecycle.js';
import type { AskQuestionParams } from '../../protocol/eca/ask.js';
import { ECA } from '../../protocol/eca/methods.js';
import type { AskUser } from '../../shapes/ask.js';

/**
 * ECA waits for the answer without a deadline: a user may think for minutes or step away. The
 * house rule wants one, so it is long; a user gone that long is told to the model as a failure.
 */
export const ASK_TIMEOUT_MS = 60 * 60_000;

export function ecaAsk(conn: MessageConnection, params: InitializeParams): AskUser | undefined {
  if (!params.capabilities.codeAssistant?.chatCapabilities?.askQuestion) return undefined;
  return async (chatId, q, signal) => {
    const wire: AskQuestionParams = {
      chatId,
      question: q.question,
      ...(q.options ? { options: q.options } : {}),
      ...(q.toolCallId ? { toolCallId: q.toolCallId } : {}),
      allowFreeform: q.allowFreeform,
    };
    let raw: unknown;
    try {
      raw = await request(conn, ECA.chatAskQuestion.method, wire, { timeoutMs: ASK_TIMEOUT_MS, signal, cancel: 'lsp' });
    } catch (e) {
      if (e instanceof RequestError && e.reason === 'timeout') throw new Error('the user did not answer within an hour', { cause: e });
      throw e;
    }
    const res = ECA.chatAskQuestion.result.safeParse(raw);
    if (!res.success) throw new Error('the editor answered chat/askQuestion with something that is not {answer, cancelled}');
    const { answer, cancelled } = res.data;
    return !cancelled && typeof answer === 'string' ? { answered: true, answer } : { answered: false };
  };
}
