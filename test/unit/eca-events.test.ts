/**
 * Core events → ECA notifications (src/server/eca/eca-events.ts). The serialized form is compared,
 * so key order counts: editors see exactly these bytes.
 */
import { describe, expect, it } from 'vitest';
import type { ChatEvent } from '../../src/core/events.js';
import { replayEvents, type StoredMessage } from '../../src/core/chat/messages.js';
import { contentReceivedSchema } from '../../src/protocol/eca/content.js';
import { toEcaNotifications } from '../../src/server/eca/eca-events.js';

const wire = (e: ChatEvent) => toEcaNotifications('c1', e).map((n) => `${n.method} ${JSON.stringify(n.params)}`);

describe('ECA translation of core events', () => {
  it('a cancelled turn ends with the stop text, idle, and a finished progress carrying stopReason', () => {
    expect(wire({ type: 'turnEnded', stopReason: 'cancelled' })).toEqual([
      'chat/contentReceived {"chatId":"c1","role":"system","content":{"type":"text","text":"\\nPrompt stopped"}}',
      'chat/statusChanged {"chatId":"c1","status":"idle"}',
      'chat/contentReceived {"chatId":"c1","role":"system","content":{"type":"progress","state":"finished","text":"","stopReason":"cancelled"}}',
    ]);
  });

  it('any other end has no stop text; its stop reason travels on the finished progress', () => {
    expect(wire({ type: 'turnEnded', stopReason: 'max_tokens' })).toEqual([
      'chat/statusChanged {"chatId":"c1","status":"idle"}',
      'chat/contentReceived {"chatId":"c1","role":"system","content":{"type":"progress","state":"finished","text":"","stopReason":"max_tokens"}}',
    ]);
  });

  it('a notice is a system text; an internal one (the prompt cache) says so in `internal`, a patchbay extension', () => {
    expect(wire({ type: 'notice', text: 'Context skipped: x' })).toEqual(['chat/contentReceived {"chatId":"c1","role":"system","content":{"type":"text","text":"Context skipped: x"}}']);
    expect(wire({ type: 'notice', text: 'System prompt changed (model), prompt cache invalidated.', internal: true })).toEqual([
      'chat/contentReceived {"chatId":"c1","role":"system","content":{"type":"text","text":"System prompt changed (model), prompt cache invalidated.","internal":true}}',
    ]);
  });

  it('tool call states become ECA tool contents with the fields in ECA order', () => {
    const call = { type: 'toolCall' as const, origin: 'native', id: 't1', name: 'write_file', server: 'patchbay', arguments: { path: 'a' }, summary: 'Write a' };
    expect(wire({ ...call, state: 'announced', needsApproval: true })).toEqual([
      'chat/contentReceived {"chatId":"c1","role":"assistant","content":{"type":"toolCallRun","origin":"native","id":"t1","name":"write_file","server":"eca","arguments":{"path":"a"},"summary":"Write a","manualApproval":true}}',
      // ECA chat/tool_calls.clj, [:check-approval :approval-ask] → :send-progress.
      'chat/contentReceived {"chatId":"c1","role":"system","content":{"type":"progress","state":"running","text":"Waiting for tool call approval"}}',
    ]);
    expect(wire({ ...call, state: 'announced', needsApproval: false })).toHaveLength(1);
    // [:execution-approved :execution-start] → :send-toolCallRunning, then :send-progress.
    expect(wire({ ...call, state: 'running' })[1]).toBe('chat/contentReceived {"chatId":"c1","role":"system","content":{"type":"progress","state":"running","text":"Calling tool"}}');
    expect(wire({ ...call, state: 'done', error: false, outputs: [{ type: 'text', text: 'ok' }], totalTimeMs: 3 })[0]).toContain(
      '"content":{"type":"toolCalled","origin":"native","id":"t1","name":"write_file","server":"eca","arguments":{"path":"a"},"summary":"Write a","error":false,"outputs":[{"type":"text","text":"ok"}],"totalTimeMs":3}',
    );
    expect(wire({ type: 'toolCall', state: 'preparing', origin: 'native', id: 't1', name: 'write_file', server: 'patchbay', argumentsDelta: '{"pa' })[0]).toContain(
      '"content":{"type":"toolCallPrepare","origin":"native","id":"t1","name":"write_file","server":"eca","argumentsText":"{\\"pa"}',
    );
  });

  it('a tool that outlives its stop is said as progress: ECA has no such tool state', () => {
    const [n] = toEcaNotifications('c1', { type: 'toolCall', state: 'stopping', origin: 'native', id: 't1', name: 'grep', server: 'patchbay' });
    expect(n.params).toEqual({ chatId: 'c1', role: 'system', content: { type: 'progress', state: 'running', text: 'Stopping grep: it has not returned yet' } });
  });

  it('usage: costs formatted as ECA strings only when the model is priced', () => {
    expect(wire({ type: 'usage', stepInputTokens: 10, stepOutputTokens: 5, contextTokens: 15, stepCost: 0.001, chatCost: 0.5 })[0]).toContain(
      '"content":{"type":"usage","sessionTokens":15,"messageInputTokens":10,"messageOutputTokens":5,"lastMessageCost":"0.001000","sessionCost":"0.50"}',
    );
    expect(wire({ type: 'usage', stepInputTokens: 10, stepOutputTokens: 5, contextTokens: 15 })[0]).not.toContain('Cost');
  });

  it("usage: the context breakdown in ECA's shape (docs/protocol.md ChatUsageContent), with its colors, emoji and free space", () => {
    const [n] = toEcaNotifications('c1', {
      type: 'usage',
      stepInputTokens: 900,
      stepOutputTokens: 100,
      contextTokens: 1000,
      limit: { context: 4000, output: 100 },
      autoCompactPercentage: 75,
      context: {
        categories: [
          { name: 'System prompt', tokens: 300 },
          { name: 'Conversation', tokens: 700 },
        ],
        usedTokens: 1000,
        contextLimit: 4000,
      },
    });
    expect((n.params as { content: unknown }).content).toMatchObject({
      type: 'usage',
      autoCompactPercentage: 75,
      contextBreakdown: {
        categories: [
          { name: 'System prompt', tokens: 300, color: '#61afef', emoji: '🟦' },
          { name: 'Conversation', tokens: 700, color: '#98c379', emoji: '🟩' },
        ],
        usedTokens: 1000,
        freeTokens: 3000,
        contextLimit: 4000,
        freeColor: '#5c6370',
        freeEmoji: '⬜',
      },
    });
    expect(contentReceivedSchema.safeParse(n.params).success).toBe(true);
  });

  it('replay of a stored chat becomes valid ECA contents with the right roles', () => {
    const stored: StoredMessage[] = [
      { role: 'user', text: 'q', contentId: 'u1' },
      {
        role: 'assistant',
        parts: [
          { type: 'reasoning', text: 'hm' },
          { type: 'text', text: 'a' },
        ],
      },
      { role: 'tool', toolCallId: 't1', name: 'grep', server: 'patchbay', origin: 'native', args: {}, outcome: 'rejected', error: true, outputs: [], llmText: 'no', totalTimeMs: 0 },
      { role: 'system', kind: 'summary', text: 's' },
    ];
    const out = replayEvents(stored).flatMap((e) => toEcaNotifications('c1', e));
    for (const n of out) expect(contentReceivedSchema.safeParse(n.params).success).toBe(true);
    expect(out.map((n) => (n.method === 'chat/contentReceived' ? `${n.params.role}:${n.params.content.type}` : n.method))).toEqual([
      'user:text',
      'assistant:reasonStarted',
      'assistant:reasonText',
      'assistant:reasonFinished',
      'assistant:text',
      // Every stage, as live: prepared, announced, rejected by the user (core/chat/replay-calls.ts).
      'assistant:toolCallPrepare',
      'assistant:toolCallRun',
      'assistant:toolCallRejected',
      // ECA chat.clj `message->contents`: the compact marker, then the summary as a user message.
      'system:text',
      'user:text',
    ]);
    // A rejection stored without its reason replays as the user's.
    expect(out[7].params).toMatchObject({ content: { reason: 'user' } });
    // Announced without asking: the question was answered when it was live (ECA's replay sends no manualApproval).
    expect(out[6].params).toMatchObject({ content: { manualApproval: false } });
  });

  // ECA chat/tool_calls.clj `:send-toolCalled`: text outputs stay, each image follows as ChatImageContent.
  it('a tool result with images: toolCalled with the text outputs, then one image content per image', () => {
    const done = { type: 'toolCall' as const, state: 'done' as const, origin: 'mcp', id: 't9', name: 'shot', server: 'cam', arguments: {}, error: false, totalTimeMs: 1 };
    const out = wire({
      ...done,
      outputs: [
        { type: 'text', text: 'here' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        { type: 'image', data: 'BBBB', mimeType: 'image/gif' },
      ],
    });
    expect(out).toEqual([
      'chat/contentReceived {"chatId":"c1","role":"assistant","content":{"type":"toolCalled","origin":"mcp","id":"t9","name":"shot","server":"cam","arguments":{},"error":false,"outputs":[{"type":"text","text":"here"}],"totalTimeMs":1}}',
      'chat/contentReceived {"chatId":"c1","role":"assistant","content":{"type":"image","mediaType":"image/png","base64":"AAAA"}}',
      'chat/contentReceived {"chatId":"c1","role":"assistant","content":{"type":"image","mediaType":"image/gif","base64":"BBBB"}}',
    ]);
  });

  // ECA chat.clj `messages->client`: a stored user message's images follow its text on replay.
  it('replay shows the images of a user message after its text, as user image contents', () => {
    const stored: StoredMessage[] = [{ role: 'user', text: 'see', contentId: 'u1', images: [{ mediaType: 'image/png', base64: 'AAAA' }] }];
    const out = replayEvents(stored).flatMap((e) => toEcaNotifications('c1', e));
    expect(out.map((n) => n.params)).toEqual([
      { chatId: 'c1', role: 'user', content: { type: 'text', text: 'see', contentId: 'u1' } },
      { chatId: 'c1', role: 'user', content: { type: 'image', mediaType: 'image/png', base64: 'AAAA' } },
    ]);
    for (const n of out) expect(contentReceivedSchema.safeParse(n.params).success).toBe(true);
  });
});
