/** Shared helpers for the LLM layer tests (not a test file itself). */
import type { LlmClient, LlmEvent, LlmMessage, LlmRequest } from '../../src/shapes/llm.js';

export function request(over: Partial<LlmRequest> = {}): LlmRequest {
  return {
    model: 'test-model',
    system: 'You are a test.',
    messages: [{ role: 'user', content: 'hello' }],
    tools: [],
    signal: new AbortController().signal,
    ...over,
  };
}

export async function collect(events: AsyncIterable<LlmEvent>): Promise<LlmEvent[]> {
  const out: LlmEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

export async function run(client: LlmClient, over: Partial<LlmRequest> = {}): Promise<LlmEvent[]> {
  return collect(client.stream(request(over)));
}

export function textOf(events: LlmEvent[]): string {
  return events.flatMap((e) => (e.type === 'text' ? [e.text] : [])).join('');
}

export function reasoningOf(events: LlmEvent[]): string {
  return events.flatMap((e) => (e.type === 'reasoningDelta' ? [e.text] : [])).join('');
}

export const weatherTool = {
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

/** A conversation that exercises every message kind. */
export const toolHistory: LlmMessage[] = [
  { role: 'user', content: 'weather in Paris?' },
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Checking.' },
      { type: 'toolCall', id: 'call_1', name: 'get_weather', args: { city: 'Paris' } },
    ],
  },
  { role: 'tool', toolCallId: 'call_1', name: 'get_weather', content: 'sunny, 21C', error: false },
];
