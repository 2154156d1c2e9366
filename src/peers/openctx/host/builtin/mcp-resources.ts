/** `patchbay MCP resources`: @-mention resources of the connected MCP servers and read them. */
import { invalidParams, type Item, type Mention, type MetaResult, type OpenCtxProviderImpl } from '../protocol.js';
import { DEFAULT_MENTION_LIMIT, matchesQuery, type Awaitable } from './util.js';

export interface McpResourceLike {
  uri: string;
  name: string;
  description?: string;
  mimeType?: string;
  /** Name of the MCP server that offers it. */
  server: string;
}

export interface McpResourcesDeps {
  list(): Awaitable<McpResourceLike[]>;
  read(server: string, uri: string): Promise<string>;
  limit?: number;
}

export function mcpResources(deps: McpResourcesDeps): OpenCtxProviderImpl {
  const limit = deps.limit ?? DEFAULT_MENTION_LIMIT;
  return {
    meta(): MetaResult {
      return { name: 'patchbay MCP resources', mentions: {} };
    },

    async mentions(params): Promise<Mention[]> {
      const all = await deps.list();
      return all
        .filter((r) => matchesQuery(params.query, r.name, r.uri))
        .slice(0, limit)
        .map((r) => ({
          title: r.name,
          uri: r.uri,
          ...(r.description ? { description: r.description } : {}),
          data: { server: r.server, ...(r.mimeType ? { mimeType: r.mimeType } : {}) },
        }));
    },

    async items(params): Promise<Item[]> {
      const mention = params.mention;
      if (!mention) return [];
      let server = typeof mention.data?.server === 'string' ? mention.data.server : undefined;
      if (!server) server = (await deps.list()).find((r) => r.uri === mention.uri)?.server;
      if (!server) throw invalidParams(`mention.data.server: missing, and no MCP server lists ${JSON.stringify(mention.uri)}`);
      const content = await deps.read(server, mention.uri);
      return [{ title: mention.title, url: mention.uri, ai: { content } }];
    },
  };
}
