/** `read_event_stream`: the LLM reads the history of named event streams (e.g. gateway pushes). */
import { z } from 'zod';
import type { EventStreamStore } from '../../../shapes/event-stream.js';
import type { Tool } from '../../../shapes/tool.js';
import { textResult } from '../../../shapes/tool.js';
import { defineNativeTool } from '../../../shapes/define-tool.js';

export const readEventStreamSchema = z.object({
  stream: z.string().min(1).optional().describe('Stream name. Omit it to list the streams and their sizes.'),
  contains: z.string().optional().describe('Only events whose text contains this (case-insensitive).'),
  level: z.enum(['keep', 'surface', 'inject']).optional().describe('Only events pushed at this level.'),
  source: z.string().optional().describe('Only events from this provider.'),
  since: z.string().optional().describe('Only events at or after this time (ISO 8601, e.g. 2026-01-31T09:00:00Z).'),
  after_id: z.number().int().nonnegative().optional().describe('Only events after this id (to read on from a previous answer).'),
  limit: z.number().int().min(1).max(500).optional().describe('At most this many of the newest matching events (default 50).'),
});

export function readEventStreamTool(store: EventStreamStore): Tool {
  return defineNativeTool({
    name: 'read_event_stream',
    description: `Read events that tool providers pushed into named event streams (CI results, alerts, messages…).

Usage:
- Without \`stream\`, lists the streams with their event counts.
- With \`stream\`, returns the newest matching events, oldest first, one per line: \`#id time [level] source: text\` (metadata as JSON when present).
- Filter with \`contains\`, \`level\`, \`source\`, \`since\`; page forward with \`after_id\`.`,
    schema: readEventStreamSchema,
    readOnly: true,
    mutates: false,
    pathArgs: [],
    summary: (a) => (a.stream ? `Reading event stream "${a.stream}"` : 'Listing event streams'),
    async run(args) {
      if (!args.stream) {
        const streams = store.streams();
        if (!streams.length) return textResult('No event streams yet.');
        return textResult(streams.map((s) => `${s.stream}: ${s.count} events, last at ${new Date(s.last).toISOString()}`).join('\n'));
      }
      const since = args.since !== undefined ? Date.parse(args.since) : undefined;
      if (since !== undefined && Number.isNaN(since)) return textResult(`Invalid "since": ${args.since} is not an ISO 8601 time.`, true);
      const events = store.queryEvents({
        stream: args.stream,
        contains: args.contains,
        level: args.level,
        source: args.source,
        since,
        afterId: args.after_id,
        limit: args.limit ?? 50,
      });
      if (!events.length) return textResult(`No matching events in stream "${args.stream}".`);
      const lines = events.map((e) => `#${e.id} ${new Date(e.createdAt).toISOString()} [${e.level}] ${e.source}: ${e.text}${e.metadata ? ` ${JSON.stringify(e.metadata)}` : ''}`);
      return textResult(lines.join('\n'));
    },
  });
}
