import { afterEach } from 'vitest';
/** Shared helpers for the MCP tests: a host wired to real registries, fixtures, logs, waiting. */
import { mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CommandRegistry } from '../../src/core/chat/commands.js';
import type { ToolContext, ToolResult } from '../../src/shapes/tool.js';
import { ToolRegistry } from '../../src/core/tool-calls/tool-registry.js';
import { McpHostImpl, type McpHostOptions } from '../../src/peers/mcp/host.js';
import type { McpServerInfo } from '../../src/peers/mcp/types.js';
import { logToFile, logToStderr, setLogLevel } from '../../src/util/log.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const everythingBin = join(repo, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const fixture = (name: string): string => join(repo, 'test/fixtures', name);

export function tempDir(prefix = 'patchbay-mcp-'): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

/** Sends patchbay's log to a file the test can read (vitest runs each file in its own process). */
export function captureLog(): { read(): string } {
  const file = join(tempDir('patchbay-mcp-log-'), 'log.txt');
  logToFile(file);
  logToStderr(false);
  setLogLevel('debug');
  return {
    read: () => {
      try {
        return readFileSync(file, 'utf8');
      } catch {
        return '';
      }
    },
  };
}

export interface TestHost {
  host: McpHostImpl;
  tools: ToolRegistry;
  commands: CommandRegistry;
  /** Every serverUpdated event, in order. */
  events: McpServerInfo[];
  statuses(name: string): string[];
}

export function makeHost(servers: Record<string, unknown>, opts: Partial<McpHostOptions> = {}): TestHost {
  const tools = new ToolRegistry();
  const commands = new CommandRegistry();
  const events: McpServerInfo[] = [];
  const host = new McpHostImpl({
    servers,
    timeoutSeconds: 20,
    logLevel: 'debug',
    roots: [repo],
    env: process.env,
    tools,
    commands,
    events: { serverUpdated: (info) => events.push(info) },
    ...opts,
  });
  return { host, tools, commands, events, statuses: (name) => events.filter((e) => e.name === name).map((e) => e.status) };
}

export async function waitFor<T>(fn: () => T | undefined | false | Promise<T | undefined | false>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function ctx(opts: { signal?: AbortSignal; progress?: (t: string) => void } = {}): ToolContext {
  return { signal: opts.signal ?? new AbortController().signal, roots: [repo], chatId: 'test', editor: {}, progress: opts.progress };
}

export function text(r: ToolResult): string {
  return r.outputs.map((o) => (o.type === 'text' ? o.text : `[image ${o.mimeType}]`)).join('\n');
}

export { isAlive } from '../../src/util/pid.js';

/** makeHost, with every host disposed after each test of the file that calls this. */
export function useHosts(): (...args: Parameters<typeof makeHost>) => TestHost {
  const hosts: TestHost[] = [];
  afterEach(async () => {
    await Promise.all(hosts.splice(0).map((h) => h.host.dispose()));
  });
  return (...args) => {
    const h = makeHost(...args);
    hosts.push(h);
    return h;
  };
}

export { repo };
