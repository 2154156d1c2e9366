/**
 * `patchbay mcp-conformance-client <server-url>`: the client under test for the official MCP
 * conformance suite (`@modelcontextprotocol/conformance client --command ...`). The suite starts a
 * scripted MCP server per scenario, appends its URL to the command and names the scenario in
 * `MCP_CONFORMANCE_SCENARIO`; it then judges the traffic it saw. This driver goes through
 * patchbay's own MCP client (McpHostImpl with one remote server, its tools in a ToolRegistry),
 * never the raw SDK client, so the suite tests our code. Exit code: 0 when the scenario's steps
 * ran, 1 otherwise, 2 on bad usage.
 */
import { CommandRegistry } from '../core/chat/commands.js';
import { llmName, ToolRegistry } from '../core/tool-calls/tool-registry.js';
import type { Tool, ToolResult } from '../shapes/tool.js';
import type { AskUser } from '../shapes/ask.js';
import { ELICIT_SKIP, McpHostImpl } from '../peers/mcp/index.js';
import type { McpServerInfo } from '../peers/mcp/types.js';
import { errorMessage } from '../util/log.js';
import type { OAuthUser } from '../peers/mcp/oauth-provider.js';
import { openSecretStore } from '../util/secrets.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SERVER = 'conformance';
const CONNECT_TIMEOUT_MS = 20_000;
const CALL_TIMEOUT_MS = 20_000;

interface Connected {
  host: McpHostImpl;
  tools: ToolRegistry;
  info: McpServerInfo;
  /** Calls one of the server's tools through patchbay's Tool adapter. */
  call(name: string, args: Record<string, unknown>): Promise<ToolResult>;
}

type Step = (c: Connected) => Promise<void>;

/**
 * The user, scripted: leaves every optional field out (so the server's defaults apply, as
 * elicitation-sep1034-client-defaults expects) and otherwise picks the first option.
 */
const ask: AskUser = async (_chatId, q) => {
  const pick = q.options?.find((o) => o.label === ELICIT_SKIP) ?? q.options?.[0];
  return pick ? { answered: true, answer: pick.label } : { answered: false };
};

function text(r: ToolResult): string {
  return r.outputs.map((o) => (o.type === 'text' ? o.text : `[${o.type}]`)).join('\n');
}

/**
 * The user at the authorization page, scripted as the suite's example client does
 * (examples/clients/typescript/helpers/ConformanceOAuthProvider.ts `redirectToAuthorization`): the
 * scenario's authorization server approves at once, so the authorization URL is fetched without
 * following the redirect and the code read from its `Location`. Nothing listens on the redirect URL.
 */
function scriptedUser(): OAuthUser {
  let pending: Promise<string> | undefined;
  return {
    redirectUrl: 'http://localhost:3000/callback',
    authorize(url, state) {
      pending = (async () => {
        const res = await fetch(url, { redirect: 'manual' });
        const location = res.headers.get('location');
        if (!location) throw new Error(`the authorization endpoint answered ${res.status} without a redirect`);
        const back = new URL(location, url);
        const returned = back.searchParams.get('state');
        if (returned !== null && returned !== state) throw new Error('the authorization server returned another state');
        const code = back.searchParams.get('code');
        if (!code) throw new Error(`no code in the redirect (${back.searchParams.get('error') ?? 'no error given'})`);
        return code;
      })();
      pending.catch(() => {});
      return Promise.resolve();
    },
    code: () => pending ?? Promise.reject(new Error('no sign-in was started')),
  };
}

/** The scenario's extra data (pre-registered client credentials…), from MCP_CONFORMANCE_CONTEXT. */
function scenarioContext(): Record<string, unknown> {
  const raw = process.env.MCP_CONFORMANCE_CONTEXT;
  if (!raw) return {};
  const parsed: unknown = JSON.parse(raw);
  return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
}

/**
 * Our config entry for the scenario's server: its URL, and what the scenario's context says a
 * user would have configured (a pre-registered client, client credentials, an enterprise IdP).
 */
function serverEntry(url: string, scenario: string | undefined): Record<string, unknown> {
  const ctx = scenarioContext();
  const str = (k: string): string | undefined => (typeof ctx[k] === 'string' ? ctx[k] : undefined);
  const entry: Record<string, unknown> = {
    url,
    // The document the suite's authorization server pretends to fetch (basic-cimd.ts CIMD_CLIENT_METADATA_URL).
    clientMetadataUrl: 'https://conformance-test.local/client-metadata.json',
  };
  const set = (key: string, value: string | undefined) => value !== undefined && (entry[key] = value);
  set('clientId', str('client_id'));
  set('clientSecret', str('client_secret'));
  if (scenario?.startsWith('auth/client-credentials-')) {
    entry.grantType = 'client_credentials';
    set('clientPrivateKey', str('private_key_pem'));
    set('clientSigningAlgorithm', str('signing_algorithm') ?? (str('private_key_pem') ? 'ES256' : undefined));
  }
  if (scenario === 'auth/cross-app-access-complete-flow') {
    entry.grantType = 'id-jag';
    entry.idp = { tokenEndpoint: str('idp_token_endpoint'), clientId: str('idp_client_id'), idToken: str('idp_id_token') };
  }
  return entry;
}

/** The auth scenarios' server has one tool, `test-tool` (helpers/createServer.ts). */
const callTestTool: Step = async (c) => {
  const r = await c.call('test-tool', {});
  if (r.error) throw new Error(`test-tool returned ${JSON.stringify(r)}`);
};

/** What each scenario needs the client to do once connected (connect + tools/list happen first). */
const SCENARIOS: Record<string, Step> = {
  // initialize handshake, then tools/list: both done by connecting.
  initialize: async () => {},
  tools_call: async (c) => {
    const r = await c.call('add_numbers', { a: 2, b: 3 });
    if (r.error || !text(r).includes('5')) throw new Error(`add_numbers returned ${JSON.stringify(r)}`);
  },
  // The server sends elicitation/create while the tool runs; the client must accept and fill defaults.
  'elicitation-sep1034-client-defaults': async (c) => {
    const r = await c.call('test_client_elicitation_defaults', {});
    if (r.error || !/Elicitation completed/.test(text(r))) throw new Error(`elicitation tool returned ${JSON.stringify(r)}`);
  },
  // The server closes the tools/call SSE stream after a priming event (retry: 500); the answer
  // only arrives on a GET reconnection with Last-Event-ID after waiting `retry` ms.
  'sse-retry': async (c) => {
    const r = await c.call('test_reconnection', {});
    if (r.error) throw new Error(`test_reconnection returned ${JSON.stringify(r)}`);
  },
};

function parseArgs(args: string[]): { url?: string; scenario?: string; error?: string } {
  let scenario = process.env.MCP_CONFORMANCE_SCENARIO;
  let url: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--scenario') scenario = args[++i];
    else if (a.startsWith('--scenario=')) scenario = a.slice('--scenario='.length);
    else if (a.startsWith('--')) return { error: `Unknown option ${a}` };
    else url = a; // the suite appends the server URL last
  }
  if (!url) return { error: 'Usage: patchbay mcp-conformance-client [--scenario <name>] <server-url>' };
  try {
    new URL(url);
  } catch {
    return { error: `Not a URL: ${url}` };
  }
  return { url, scenario };
}

async function connect(url: string, scenario: string | undefined, secretsHome: string): Promise<Connected> {
  const tools = new ToolRegistry();
  let settle: (info: McpServerInfo) => void = () => {};
  const settled = new Promise<McpServerInfo>((r) => (settle = r));
  const host = new McpHostImpl({
    servers: { [SERVER]: serverEntry(url, scenario) },
    timeoutSeconds: CALL_TIMEOUT_MS / 1000,
    logLevel: 'info',
    roots: [process.cwd()],
    env: process.env,
    tools,
    commands: new CommandRegistry(),
    ask,
    // The same OAuth client as the server's, with a scripted user and a file store of its own.
    secrets: openSecretStore({ env: { PATCHBAY_SECRET_STORE: 'file' }, home: secretsHome }),
    oauthUser: scriptedUser,
    // One attempt: a failed connection is the scenario's answer, not something to retry.
    restart: { maxRestarts: 0 },
    events: {
      serverUpdated: (info) => {
        if (info.name === SERVER && (info.status === 'running' || info.status === 'failed' || info.status === 'stopped' || info.status === 'requires-auth')) settle(info);
      },
    },
  });
  host.startAll();
  let timer: NodeJS.Timeout | undefined;
  const info = await Promise.race([
    settled,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`server not running after ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS))),
  ]).finally(() => clearTimeout(timer));
  if (info.status !== 'running') {
    await host.dispose().catch(() => {});
    throw new Error(`server ${info.status}: ${info.lastError ?? 'no error given'}`);
  }
  const find = (name: string): Tool => {
    const t = tools.all().find((x) => x.server === SERVER && x.name === name);
    if (!t) throw new Error(`tool ${name} not offered; have: ${tools.all().map(llmName).join(', ') || 'none'}`);
    return t;
  };
  return {
    host,
    tools,
    info,
    call: async (name, args) => {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(new Error(`${name} timed out`)), CALL_TIMEOUT_MS);
      try {
        return await find(name).call(args, { signal: controller.signal, roots: [process.cwd()], chatId: 'mcp-conformance', editor: {} });
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

export async function runMcpConformanceClient(args: string[]): Promise<void> {
  const { url, scenario, error } = parseArgs(args);
  if (error || !url) {
    process.stderr.write(`${error}\n`);
    process.exitCode = 2;
    return;
  }
  const step = scenario ? (SCENARIOS[scenario] ?? (scenario.startsWith('auth/') ? callTestTool : undefined)) : undefined;
  if (scenario && !step) process.stderr.write(`mcp-conformance-client: no steps for scenario "${scenario}"; connecting and listing tools only\n`);
  let connected: Connected | undefined;
  const secretsHome = mkdtempSync(join(tmpdir(), 'pb-conformance-secrets-'));
  try {
    connected = await connect(url, scenario, secretsHome);
    process.stderr.write(`mcp-conformance-client: connected; tools: ${connected.info.tools.map((t) => t.name).join(', ') || 'none'}\n`);
    await (step ?? (async () => {}))(connected);
    process.stderr.write(`mcp-conformance-client: scenario ${scenario ?? '(none)'} done\n`);
    process.exitCode = 0;
  } catch (e) {
    process.stderr.write(`mcp-conformance-client: ${errorMessage(e)}\n`);
    process.exitCode = 1;
  } finally {
    await connected?.host.dispose().catch((e: unknown) => process.stderr.write(`mcp-conformance-client: dispose: ${errorMessage(e)}\n`));
    rmSync(secretsHome, { recursive: true, force: true });
    // A lingering socket must not keep the suite waiting for its timeout.
    setTimeout(() => process.exit(), 2_000).unref();
  }
}
