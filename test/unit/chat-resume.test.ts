/**
 * The pure parts of `patchbay chat`'s stored chats and exit summary: `--continue`/`--resume`
 * parsing, the chat list's lines and ages, what `/resume <arg>` picks, `/rewind`'s count, the
 * preview of a resumed chat, and the summary's totals (tokens, cost without the steps' rounding,
 * the resume command).
 */
import { describe, expect, it } from 'vitest';
import { parseChatArgs } from '../../src/cli/chat.js';
import { age, chatListLines, pickChat, recentExchanges, rewindCount } from '../../src/cli/chat-resume.js';
import { formatUsd, resumeCommand, summaryLines, UsageTotals } from '../../src/cli/chat-summary.js';
import type { ChatSummary } from '../../src/protocol/eca/chat.js';
import type { ContentReceived } from '../../src/protocol/eca/content.js';

const NOW = 1_800_000_000_000;
const chat = (id: string, extra: Partial<ChatSummary> = {}): ChatSummary => ({ id, status: 'idle', messageCount: 2, updatedAt: NOW - 60_000, ...extra });

describe('parseChatArgs: --continue and --resume', () => {
  it('--continue / -c, with or without a prompt', () => {
    expect(parseChatArgs(['--continue'])).toMatchObject({ start: { continue: true }, prompt: '' });
    expect(parseChatArgs(['-c', 'and now?'])).toMatchObject({ start: { continue: true }, prompt: 'and now?' });
  });

  it('--resume takes the next word as the id, unless it is an option or a prompt with spaces', () => {
    expect(parseChatArgs(['--resume', 'abc-123'])).toMatchObject({ start: { resume: 'abc-123' }, prompt: '' });
    expect(parseChatArgs(['--resume=abc-123', 'go on'])).toMatchObject({ start: { resume: 'abc-123' }, prompt: 'go on' });
    expect(parseChatArgs(['-r', 'abc', 'go on'])).toMatchObject({ start: { resume: 'abc' }, prompt: 'go on' });
    expect(parseChatArgs(['--resume', 'and now?'])).toMatchObject({ start: { resume: true }, prompt: 'and now?' });
    expect(parseChatArgs(['--resume', '--yes'])).toMatchObject({ start: { resume: true }, yes: true });
    expect(parseChatArgs(['--resume', '--', 'word'])).toMatchObject({ start: { resume: true }, prompt: 'word' });
    expect(parseChatArgs(['--resume'])).toMatchObject({ start: { resume: true } });
  });

  it('refuses both at once and an empty --resume=', () => {
    expect(parseChatArgs(['--continue', '--resume', 'x'])).toEqual({ error: 'Give one of --continue and --resume' });
    expect(parseChatArgs(['--resume='])).toEqual({ error: 'Option --resume= needs a chat id' });
  });
});

describe('the chat list', () => {
  it('ages read as a person says them', () => {
    expect(age(NOW - 5_000, NOW)).toBe('just now');
    expect(age(NOW - 5 * 60_000, NOW)).toBe('5 min ago');
    expect(age(NOW - 3 * 3_600_000, NOW)).toBe('3 h ago');
    expect(age(NOW - 3 * 86_400_000, NOW)).toBe('3 days ago');
    expect(age(undefined, NOW)).toBe('unknown age');
  });

  it('numbers the chats, marks the current one, and keeps titles to one clean line', () => {
    const lines = chatListLines([chat('a', { title: 'Fix the\nparser\x1b[31m' }), chat('b', { messageCount: 1 })], NOW, 'b');
    expect(lines).toEqual(['  1. Fix the parser[31m · 2 messages · 1 min ago · a', '* 2. Untitled · 1 message · 1 min ago · b']);
  });
});

describe('ids and titles an editor chose, in the terminal (review)', () => {
  it('escape sequences in a chat id are shown as \\u escapes, in the list and in the resume command; a bidi override in a title cannot reverse the line', () => {
    // chat/prompt takes the client's chatId as is: another editor's chat can be named anything.
    const evil = 'x\x1b]52;c;cHduZWQ=\x07\x9b2J';
    const [line] = chatListLines([chat(evil, { title: 'Fix \u202ethe parser' })], NOW);
    expect(line).not.toMatch(/[\x00-\x1f\x7f-\x9f\u202e]/);
    expect(line).toBe('  1. Fix \\u202ethe parser · 2 messages · 1 min ago · x\\u001b]52;c;cHduZWQ=\\u0007\\u009b2J');
    expect(summaryLines(new UsageTotals(), evil)).toEqual(["resume: patchbay chat --resume 'x\\u001b]52;c;cHduZWQ=\\u0007\\u009b2J'"]);
  });
});

describe('pickChat (/resume <arg>, the picker)', () => {
  const chats = [chat('3f2a9c1e-1111'), chat('3f2b0000-2222'), chat('c-7')];
  it('a number of the list, an id, or the unique start of one', () => {
    expect(pickChat('2', chats)).toEqual({ chat: chats[1] });
    expect(pickChat('c-7', chats)).toEqual({ chat: chats[2] });
    expect(pickChat('3f2a', chats)).toEqual({ chat: chats[0] });
  });

  it('says what is wrong with a number out of range or an ambiguous start; another id is passed on', () => {
    expect(pickChat('4', chats)).toEqual({ error: 'no chat 4: pick 1 to 3' });
    expect(pickChat('1', [])).toEqual({ error: 'this folder has no chats yet' });
    expect(pickChat('3f2', chats)).toEqual({ id: '3f2' }); // too short to be a start
    expect(pickChat('3f2a9', [...chats, chat('3f2a9d')])).toEqual({ error: '"3f2a9" starts 2 chat ids: give more of it' });
    expect(pickChat('elsewhere-1', chats)).toEqual({ id: 'elsewhere-1' });
    expect(pickChat('  ', chats)).toEqual({ error: 'no chat named' });
  });

  it('four digits that are no number of the list are the start of an id made of digits (review)', () => {
    // One UUID in seven starts with four digits.
    const digits = [chat('1234abcd-1111'), chat('5678ef00-2222')];
    expect(pickChat('1234', digits)).toEqual({ chat: digits[0] });
    expect(pickChat('2', digits)).toEqual({ chat: digits[1] });
    expect(pickChat('9999', digits)).toEqual({ error: 'no chat 9999: pick 1 to 2' });
  });
});

describe('/rewind [n]', () => {
  it('defaults to 1 and takes a positive whole number only', () => {
    expect(rewindCount('')).toBe(1);
    expect(rewindCount(' 3 ')).toBe(3);
    for (const bad of ['0', '-1', '1.5', 'two']) expect(rewindCount(bad)).toBeUndefined();
  });
});

describe('recentExchanges (what a resumed chat shows)', () => {
  const c = (role: ContentReceived['role'], content: ContentReceived['content'], chatId = 'c1'): ContentReceived => ({ chatId, role, content });
  const contents: ContentReceived[] = [
    c('user', { type: 'text', text: 'first' }),
    c('assistant', { type: 'text', text: 'one' }),
    c('user', { type: 'text', text: 'second\nwith more lines' }),
    c('assistant', { type: 'toolCalled', origin: 'native', id: 't1', name: 'read_file', arguments: {}, error: false, outputs: [] } as never),
    c('assistant', { type: 'text', text: 'Read ' }),
    c('assistant', { type: 'text', text: 'it.' }),
    c('user', { type: 'text', text: 'a subagent' }, 'sub'),
    c('user', { type: 'text', text: 'third' }),
  ];

  it('the last exchanges, the streamed answer joined, tool calls counted, other chats left out', () => {
    expect(recentExchanges(contents, 'c1')).toEqual({ lines: ['> second …', '  (1 tool call) Read it.', '> third', '  (no answer)'], prompts: 3 });
    expect(recentExchanges(contents, 'c1', 1, 10).lines).toEqual(['> third', '  (no answer)']);
  });

  it('cuts a long line to the width', () => {
    expect(recentExchanges([c('user', { type: 'text', text: 'x'.repeat(50) })], 'c1', 1, 10).lines[0]).toBe(`> ${'x'.repeat(9)}…`);
  });
});

describe('the exit summary', () => {
  const usage = (i: number, o: number, cost?: string, chatCost?: string) => ({
    type: 'usage' as const,
    sessionTokens: i + o,
    messageInputTokens: i,
    messageOutputTokens: o,
    ...(cost ? { lastMessageCost: cost, sessionCost: chatCost ?? cost } : {}),
  });

  it('adds up the tokens of every step, and takes the cost from the chat`s total, not the rounded steps', () => {
    const t = new UsageTotals();
    // 0.045 + 0.051: the steps' own costs, rounded to the cent, would add up to 0.09.
    t.add(usage(10_000, 1_000, '0.04', '0.04'), 'c1');
    t.add(usage(12_000, 1_000, '0.05', '0.10'), 'c1');
    expect(summaryLines(t, 'c1')).toEqual(['tokens: 22,000 in, 2,000 out · $0.10', 'resume: patchbay chat --resume c1']);
  });

  it('counts only this run`s cost of a resumed chat, and of each chat it went through', () => {
    const t = new UsageTotals();
    t.add(usage(100, 10, '0.20', '1.20'), 'old'); // the chat had cost $1.00 before
    t.add(usage(100, 10, '0.30', '1.50'), 'old');
    t.add(usage(100, 10, '0.25', '0.25'), 'fork');
    expect(t.cost).toBeCloseTo(0.75, 10);
  });

  it('no cost when nothing was priced, no tokens line when no model answered, no hint without a stored chat', () => {
    const t = new UsageTotals();
    expect(summaryLines(t, undefined)).toEqual([]);
    expect(summaryLines(t, 'c1')).toEqual(['resume: patchbay chat --resume c1']);
    t.add(usage(5, 2), 'c1');
    expect(summaryLines(t, undefined)).toEqual(['tokens: 5 in, 2 out']);
  });

  it('formats small costs so they do not read $0.00, and quotes an id a shell would split', () => {
    expect(formatUsd(0.000016)).toBe('$0.000016');
    expect(formatUsd(1.234)).toBe('$1.23');
    expect(resumeCommand('3f2a9c1e-0d4b-4f5e-9a1b-2c3d4e5f6a7b')).toBe('patchbay chat --resume 3f2a9c1e-0d4b-4f5e-9a1b-2c3d4e5f6a7b');
    expect(resumeCommand("it's mine")).toBe(`patchbay chat --resume 'it'\\''s mine'`);
  });
});
