/**
 * The ECA method table is the server's: every method the server registers a handler for is in
 * the table (as a client → server method of the same kind), and every client → server method of
 * the table has a handler.
 */
import { describe, expect, it, vi } from 'vitest';
import { PassThrough } from 'node:stream';
import { ECA, ECA_METHODS } from '../../src/protocol/eca/methods.js';

/** What the server registered on its connection: method → request or notification. */
const registered = new Map<string, 'request' | 'notification'>();
let catchAll = { request: false, notification: false };

// The server builds its connection through rpc/connection.js: hand it a recording fake instead.
vi.mock('../../src/rpc/connection.js', () => ({
  createConnection: () => ({
    rpc: {
      onRequest: (method: unknown) => {
        if (typeof method === 'string') registered.set(method, 'request');
        else catchAll.request = true;
      },
      onNotification: (method: unknown) => {
        if (typeof method === 'string') registered.set(method, 'notification');
        else catchAll.notification = true;
      },
      onClose: () => {},
      listen: () => {},
      dispose: () => {},
    },
    notify: () => {},
  }),
}));

describe('ECA method table', () => {
  it('lists exactly the methods the server registers, each as the kind it is registered as', async () => {
    registered.clear();
    catchAll = { request: false, notification: false };
    const { EcaServer } = await import('../../src/server/eca/server.js');
    new EcaServer({ input: new PassThrough(), output: new PassThrough(), onExit: () => {} });

    const served = Object.fromEntries(ECA_METHODS.filter((m) => m.direction === 'clientToServer').map((m) => [m.method, m.kind]));
    expect(Object.fromEntries(registered)).toEqual(served);
    // Unknown methods still get an answer (−32601), unknown notifications are ignored.
    expect(catchAll).toEqual({ request: true, notification: true });
  });

  it('names each method once, and the server → client ones include what editors must handle', () => {
    const names = ECA_METHODS.map((m) => m.method);
    expect(new Set(names).size).toBe(names.length);
    expect(ECA.chatContentReceived).toMatchObject({ method: 'chat/contentReceived', direction: 'serverToClient', kind: 'notification' });
    expect(ECA.editorGetDiagnostics).toMatchObject({ method: 'editor/getDiagnostics', direction: 'serverToClient', kind: 'request' });
    expect(ECA.chatAskQuestion).toMatchObject({ method: 'chat/askQuestion', direction: 'serverToClient', kind: 'request' });
  });

  it('validates params and results with the table schemas', () => {
    expect(ECA.chatPrompt.params.safeParse({ message: 'hi', agent: 'plan' })).toMatchObject({ success: true, data: { message: 'hi', agent: 'plan' } });
    expect(ECA.chatPrompt.params.safeParse({ agent: 'plan' }).success).toBe(false);
    expect(ECA.chatPrompt.result.safeParse({ chatId: 'c', model: 'p/m', status: 'prompting' }).success).toBe(true);
    expect(ECA.chatList.result.safeParse({ chats: [{ id: 'c', status: 'idle' }] }).success).toBe(false); // messageCount missing
  });
});
