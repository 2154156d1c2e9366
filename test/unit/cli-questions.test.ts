/** How `patchbay chat` reads an answer to a server's question (src/cli/chat-ask.ts). */
import { describe, expect, it } from 'vitest';
import { parseQuestionAnswer, questionLines, questionPrompt, type Question } from '../../src/cli/chat-ask.js';

const pick: Question = { question: 'Which?', options: [{ label: 'Alpha', description: 'first' }, { label: 'Beta' }], allowFreeform: false };
const free: Question = { ...pick, allowFreeform: true };

describe('CLI questions', () => {
  it('a number or a label (any case) picks an option; out of range or other text asks again unless free text is allowed', () => {
    expect(parseQuestionAnswer(' 2 ', pick)).toEqual({ answer: 'Beta' });
    expect(parseQuestionAnswer('alpha', pick)).toEqual({ answer: 'Alpha' });
    expect(parseQuestionAnswer('3', pick)).toBeUndefined();
    expect(parseQuestionAnswer('gamma', pick)).toBeUndefined();
    expect(parseQuestionAnswer('3', free)).toEqual({ answer: '3' });
    expect(parseQuestionAnswer('gamma', free)).toEqual({ answer: 'gamma' });
  });

  it('an empty line cancels; a question without options takes any text', () => {
    expect(parseQuestionAnswer('   ', free)).toEqual({ cancelled: true });
    expect(parseQuestionAnswer('anything', { question: 'Name?', allowFreeform: false })).toEqual({ answer: 'anything' });
  });

  it('shows the options numbered and says how to answer', () => {
    expect(questionLines(pick)).toEqual(['? Which?', '  1. Alpha — first', '  2. Beta']);
    expect(questionPrompt(pick)).toBe('Pick 1-2 (Enter alone cancels): ');
    expect(questionPrompt(free)).toBe('Pick 1-2 or type your answer (Enter alone cancels): ');
    expect(questionPrompt({ question: 'Name?', allowFreeform: true })).toBe('Your answer (Enter alone cancels): ');
  });
});
