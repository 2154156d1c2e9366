/**
 * `ask_user` on its own (ECA src/eca/features/tools/ask_user.clj): its schema as the model sees
 * it, how it tolerates sloppy options, its summary, and the texts the model reads back.
 */
import { describe, expect, it } from 'vitest';
import type { AskAnswer, AskQuestion } from '../../src/shapes/ask.js';
import { askUserTool, nativeTools } from '../../src/core/tools/native/index.js';
import { context, text } from './tools-helpers.js';

/** The tool with a front end that records what it was asked and answers `answer`. */
function withAnswer(answer: AskAnswer | Error) {
  const asked: Array<{ chatId: string; q: AskQuestion }> = [];
  const tool = askUserTool(async (chatId, q) => {
    asked.push({ chatId, q });
    if (answer instanceof Error) throw answer;
    return answer;
  });
  return { tool, asked };
}

describe('ask_user', () => {
  it('is offered only with a way to ask, read-only, with ECA’s arguments', () => {
    expect(nativeTools().some((t) => t.name === 'ask_user')).toBe(false);
    const tool = nativeTools({ ask: async () => ({ answered: false }) }).find((t) => t.name === 'ask_user')!;
    expect(tool).toMatchObject({ readOnly: true, mutates: false, server: 'patchbay' });
    expect(Object.keys(tool.inputSchema.properties as object)).toEqual(['question', 'options', 'allowFreeform']);
    expect(tool.inputSchema.required).toEqual(['question']);
    expect((tool.inputSchema.properties as any).options.items.required).toEqual(['label']);
  });

  it('recovers options sent as a JSON string and drops unusable ones', async () => {
    const { tool, asked } = withAnswer({ answered: true, answer: 'b' });
    const options = JSON.stringify(['a', '', { label: ' ' }, { label: 'b', description: '' }, 7]);
    const r = await tool.call({ question: 'which?', options }, { ...context(['/tmp']), toolCallId: 't1' });
    expect(text(r)).toBe('User answered: b');
    expect(asked).toEqual([{ chatId: 'test-chat', q: { question: 'which?', options: [{ label: 'a' }, { label: 'b' }], allowFreeform: true, toolCallId: 't1' } }]);
  });

  it('asks without options when none is usable', async () => {
    const { tool, asked } = withAnswer({ answered: true, answer: 'x' });
    await tool.call({ question: 'q?', options: 'not json' }, context(['/tmp']));
    expect(asked[0].q).toEqual({ question: 'q?', allowFreeform: true });
  });

  it('refuses a blank question without asking', async () => {
    const { tool, asked } = withAnswer({ answered: true, answer: 'x' });
    const r = await tool.call({ question: '  ' }, context(['/tmp']));
    expect(r.error).toBe(true);
    expect(text(r)).toContain('must not be blank');
    expect(asked).toHaveLength(0);
  });

  it('tells the model when the user cancelled or the front end failed', async () => {
    const cancelled = await withAnswer({ answered: false }).tool.call({ question: 'q?' }, context(['/tmp']));
    expect(cancelled).toMatchObject({ error: true });
    expect(text(cancelled)).toBe('User cancelled the question.');
    const failed = await withAnswer(new Error('the user did not answer within an hour')).tool.call({ question: 'q?' }, context(['/tmp']));
    expect(text(failed)).toBe('ask_user failed: the user did not answer within an hour');
  });

  it('summarises the question on one line, cut at 50 characters', () => {
    const tool = withAnswer({ answered: false }).tool;
    expect(tool.summary?.({ question: 'Tabs\nor spaces?' })).toBe('Q: Tabs or spaces?');
    const long = tool.summary?.({ question: 'x'.repeat(80) })!;
    expect(long).toHaveLength(50);
    expect(long.endsWith('...')).toBe(true);
    expect(tool.summary?.({})).toBe('Preparing question');
  });
});
