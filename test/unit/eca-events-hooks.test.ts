/**
 * Hook runs as ECA contents (docs/protocol.md `ChatHookActionStartedContent`,
 * `ChatHookActionFinishedContent`; eca chat/lifecycle.clj `notify-before-hook-action!` /
 * `notify-after-hook-action!`): system contents, fields in the protocol's order.
 */
import { describe, expect, it } from 'vitest';
import type { ChatEvent } from '../../src/core/events.js';
import { contentReceivedSchema } from '../../src/protocol/eca/content.js';
import { toEcaNotifications } from '../../src/server/eca/eca-events.js';

const wire = (e: ChatEvent) => toEcaNotifications('c1', e).map((n) => `${n.method} ${JSON.stringify(n.params)}`);

describe('ECA translation of hook events', () => {
  it('hookActionStarted and hookActionFinished, with toolCallId for tool hooks', () => {
    expect(wire({ type: 'hookActionStarted', id: 'h1', name: 'guard', actionType: 'shell' })).toEqual([
      'chat/contentReceived {"chatId":"c1","role":"system","content":{"type":"hookActionStarted","id":"h1","name":"guard","actionType":"shell"}}',
    ]);
    expect(wire({ type: 'hookActionFinished', id: 'h1', name: 'guard', actionType: 'shell', status: 2, error: 'no', toolCallId: 't1' })).toEqual([
      'chat/contentReceived {"chatId":"c1","role":"system","content":{"type":"hookActionFinished","id":"h1","name":"guard","actionType":"shell","status":2,"error":"no","toolCallId":"t1"}}',
    ]);
    for (const n of toEcaNotifications('c1', { type: 'hookActionFinished', id: 'h', name: 'n', actionType: 'shell', status: 0, output: 'Hook executed' })) {
      expect(contentReceivedSchema.safeParse(n.params).success).toBe(true);
    }
  });

  it('a call a hook rejected is rejected with ECA’s hookRejected', () => {
    const [n] = toEcaNotifications('c1', { type: 'toolCall', state: 'rejected', origin: 'native', id: 't1', name: 'read_file', server: 'patchbay', arguments: {}, reason: 'hook' });
    expect(n.params).toMatchObject({ content: { type: 'toolCallRejected', reason: 'hookRejected' } });
  });
});
