/**
 * The ACP translator (src/server/acp/updates.ts), event by event, for what the e2e tests cannot
 * easily reach: message ids for text stored before text parts had ids, and compactions that fail
 * or are cancelled (ACP schema v1 ContentChunk `messageId`, CompactionUpdate).
 */
import { describe, expect, it } from 'vitest';
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { AcpTranslator } from '../../src/server/acp/updates.js';
import type { ChatEvent } from '../../src/core/events.js';

const live = { replay: false, compaction: true };
const run = (t: AcpTranslator, events: ChatEvent[], opts = live): SessionUpdate[] => events.flatMap((e) => t.translate(e, opts));
const idOf = (u: SessionUpdate | undefined) => (u && 'messageId' in u ? u.messageId : undefined);

describe('AcpTranslator message ids', () => {
  it('text without an id shares one id per run of chunks; anything shown between starts a new message', () => {
    const t = new AcpTranslator();
    const [a, b, notice, c] = run(t, [
      { type: 'assistantText', text: 'one ' },
      { type: 'assistantText', text: 'two' },
      { type: 'notice', text: 'a notice' },
      { type: 'assistantText', text: 'three' },
    ]);
    expect(idOf(a)).toEqual(expect.any(String));
    expect(idOf(b)).toBe(idOf(a));
    expect(idOf(notice)).not.toBe(idOf(a));
    expect(idOf(c)).not.toBe(idOf(a));
    expect(idOf(c)).not.toBe(idOf(notice));
  });

  it('an internal notice (the prompt cache was rebuilt) is not shown: ACP would put it in the answer', () => {
    const t = new AcpTranslator();
    const out = run(t, [
      { type: 'notice', text: 'System prompt changed (rules), prompt cache invalidated.', internal: true },
      { type: 'notice', text: 'Skipped @big.bin: binary file' },
    ]);
    expect(out).toHaveLength(1);
    expect(JSON.stringify(out[0])).toContain('Skipped @big.bin');
  });

  it("text with an id keeps it; a thought is named by its reasoning block; a user's image by its message", () => {
    const t = new AcpTranslator();
    const [user, image, thought, text] = run(
      t,
      [
        { type: 'userMessage', text: 'look', id: 'u1' },
        { type: 'userImage', mediaType: 'image/png', base64: 'AAAA' },
        { type: 'reasoningDelta', id: 'r1', text: 'hmm' },
        { type: 'assistantText', text: 'seen', id: 't1' },
      ],
      { ...live, replay: true },
    );
    expect([idOf(user), idOf(image), idOf(thought), idOf(text)]).toEqual(['u1', 'u1', 'r1', 't1']);
  });
});

describe('AcpTranslator compactions', () => {
  it('failed and cancelled end the compaction so; nothing at all for a client without the capability', () => {
    const t = new AcpTranslator();
    const failed: ChatEvent[] = [
      { type: 'compaction', id: 'c1', status: 'started', trigger: 'manual' },
      { type: 'compaction', id: 'c1', status: 'failed', trigger: 'manual', error: 'Compacting failed: 500' },
    ];
    expect(run(t, failed)).toEqual([
      { sessionUpdate: 'compaction_update', compactionId: 'c1', status: 'in_progress' },
      { sessionUpdate: 'compaction_update', compactionId: 'c1', status: 'failed', error: 'Compacting failed: 500' },
    ]);
    expect(run(t, [{ type: 'compaction', id: 'c2', status: 'cancelled', trigger: 'auto' }])).toEqual([{ sessionUpdate: 'compaction_update', compactionId: 'c2', status: 'cancelled' }]);
    expect(run(new AcpTranslator(), failed, { replay: false, compaction: false })).toEqual([]);
  });
});
