/**
 * The payloads the ECA plugins read to draw their tool panels, command lists and model pickers,
 * over real stdio against the built binary, with a real MCP server (test/fixtures/mcp-paged.mjs).
 * Each test names the plugin or ECA function whose reading (or sending) it follows.
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EcaProc, fakeProviderConfig, refusedPort, tempDir, useFakeLlmSuite, workspace, type Msg } from './harness.js';

const PAGED = resolve(import.meta.dirname, '../fixtures/mcp-paged.mjs');
const { llm, track } = useFakeLlmSuite();

function boot(extra: Record<string, unknown> = {}) {
  const config = fakeProviderConfig(llm().url, 'openai-chat', {
    mcpServers: { paged: { command: process.execPath, args: [PAGED] }, off: { command: process.execPath, args: [PAGED], disabled: true } },
    toolCall: { approval: { allow: { paged: {} } } },
    ...extra,
  });
  return track(new EcaProc({ home: tempDir(), config }));
}

const serverUpdates = (p: EcaProc, name?: string) => p.messages.filter((m) => m.method === 'tool/serverUpdated' && (name === undefined || m.params.name === name));
const names = (xs: Array<{ name: string }>) => xs.map((x) => x.name).sort();

describe('tool/serverUpdated as the plugins read it', () => {
  // eca-emacs eca-mcp.el `eca-mcp-servers`: (eca-dissoc (eca--session-tool-servers session) "ECA"):
  // every entry not named "ECA" is counted as an MCP server (`eca-chat--mcps-summary`) and offered
  // "stop"/"remove" (`eca-mcp--details`). eca-webview ChatSubHeader counts `type === 'mcp'`.
  // ECA's own entry: src/eca/features/tools.clj `init-servers!` {:type :native :name "ECA" :status "running"}.
  it('sends the native tools as the server named "ECA", type native, with bare tool names', async () => {
    const p = boot();
    await p.initialize(workspace());
    const native = await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.type === 'native', 'the native server');
    expect(native.params).toMatchObject({ type: 'native', name: 'ECA', status: 'running' });
    const tools = native.params.tools as Array<{ name: string; disabled: boolean }>;
    // As ECA's ServerTool: the tool's own name (the chat's tool calls carry the same bare name).
    expect(names(tools)).toEqual(expect.arrayContaining(['read_file', 'write_file', 'shell_command', 'edit_file']));
    expect(tools.every((t) => !t.name.includes('__') && t.disabled === false)).toBe(true);
    await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.name === 'paged' && m.params.status === 'running', 'paged running', 30_000);
    // Only the native entry is "ECA", so Emacs counts exactly the MCP servers.
    expect(
      serverUpdates(p)
        .filter((m) => m.params.name === 'ECA')
        .every((m) => m.params.type === 'native'),
    ).toBe(true);
  });

  // eca.el `eca--tool-server-updated` stores servers by :name (eca-assoc): an MCP entry named "ECA"
  // would overwrite the native one. Such a server is refused (a reserved name) and said in $/showMessage only.
  it('never sends an MCP entry under the native server’s name', async () => {
    const p = boot({ mcpServers: { ECA: { command: process.execPath, args: [PAGED] }, paged: { command: process.execPath, args: [PAGED] } } });
    await p.initialize(workspace());
    await p.waitFor((m) => m.method === '$/showMessage' && /mcpServers\.ECA/.test(m.params.message), 'the refusal');
    await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.name === 'paged' && m.params.status === 'running', 'paged running', 30_000);
    expect(serverUpdates(p, 'ECA').map((m) => m.params.type)).toEqual(['native']);
  });

  // ECA src/eca/features/tools.clj `make-tool-status-fn`: a tool the default agent may not use is
  // listed with `disabled: true`; eca-emacs `eca-mcp--details` greys it (eca-mcp-details-tool-disabled-face).
  it('marks the tools the default plan agent cannot use as disabled', async () => {
    const p = boot({ mcpServers: {}, chat: { generateTitles: false, defaultAgent: 'plan' } });
    await p.initialize(workspace());
    const native = await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.type === 'native', 'the native server');
    const byName = new Map((native.params.tools as Array<{ name: string; disabled: boolean }>).map((t) => [t.name, t.disabled]));
    expect(byName.get('write_file')).toBe(true);
    expect(byName.get('shell_command')).toBe(true);
    expect(byName.get('read_file')).toBe(false);
  });

  // ECA src/eca/features/tools/mcp.clj `->server`: every MCP entry has :prompts, :resources,
  // :has-auth (an OAuth access token) and :disabled (config `disabled`). eca-emacs `eca-mcp--details`
  // lists "Prompts:"/"Resources:" by :name, shows "enable" when :disabled and "logout" when :hasAuth;
  // eca-webview MCPsTab counts `server.prompts` / `server.resources` and reads `server.hasAuth`.
  it('gives MCP entries prompts, resources, disabled and hasAuth in ECA shapes', async () => {
    const p = boot();
    await p.initialize(workspace());
    const off = await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.name === 'off', 'the disabled server');
    expect(off.params).toMatchObject({ type: 'mcp', status: 'disabled', disabled: true, hasAuth: false });
    const running = await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.name === 'paged' && m.params.status === 'running', 'paged running', 30_000);
    expect(running.params).toMatchObject({ type: 'mcp', disabled: false, hasAuth: false });
    // Every page of prompts/list and resources/list, each field ECA's ServerPrompt / ServerResource has.
    expect(running.params.prompts).toEqual([
      { name: 'p1', description: 'first', arguments: [] },
      { name: 'p2', description: 'second', arguments: [] },
      {
        name: 'two-args',
        description: 'two arguments',
        arguments: [
          { name: 'a', description: '', required: true },
          { name: 'b', description: '', required: false },
        ],
      },
    ]);
    expect(running.params.resources).toEqual([1, 2, 3].map((i) => ({ uri: `fake://r/${i}`, name: `r${i}`, description: '', mimeType: 'text/plain' })));
    const starting = serverUpdates(p, 'paged').find((m) => m.params.status === 'starting')!;
    expect(starting.params).toMatchObject({ disabled: false, hasAuth: false, prompts: [], resources: [] });
  });

  // ECA src/eca/features/tools/mcp.clj `->server` sends :url for a remote server (:command/:args for
  // stdio); eca-emacs `eca-mcp--details` shows "URL: <url>" from :url and "Command: …" from :command.
  it('shows a remote MCP server by its url, not as a command', async () => {
    const url = `http://127.0.0.1:${await refusedPort()}/mcp`;
    const p = boot({ mcpServers: { web: { url } } });
    await p.initialize(workspace());
    const failed = await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.name === 'web' && m.params.status === 'failed', 'web failed', 20_000);
    expect(failed.params).toMatchObject({ type: 'mcp', url, disabled: false, hasAuth: false });
    expect(failed.params.command).toBeUndefined();
    expect(failed.params.args).toBeUndefined();
  });

  // ECA src/eca/features/tools/mcp.clj: a prompts/resources list_changed refreshes the lists and
  // calls `on-server-updated`, so the panels (eca-emacs `eca--tool-server-updated`) show the new ones.
  it('sends the server again when its prompts or resources change', async () => {
    const p = boot();
    await p.initialize(workspace());
    await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.name === 'paged' && m.params.status === 'running', 'paged running', 30_000);
    const from = p.messages.length;
    llm().script([{ toolCall: { id: 'g1', name: 'paged__grow', args: {} } }], [{ text: 'grown' }]);
    const chatId = (await p.request('chat/prompt', { message: 'grow' })).result.chatId;
    await p.turnDone(chatId);
    const grown = (m: Msg) => m.method === 'tool/serverUpdated' && m.params.name === 'paged' && m.params.prompts?.some((x: { name: string }) => x.name === 'p4');
    const withPrompt = await p.waitFor(grown, 'the new prompt', 15_000, from);
    expect(withPrompt.params.status).toBe('running');
    await p.waitFor(
      (m) => m.method === 'tool/serverUpdated' && m.params.name === 'paged' && m.params.resources?.some((x: { uri: string }) => x.uri === 'fake://r/4'),
      'the new resource',
      15_000,
      from,
    );
  });
});

describe('chat/queryCommands and config/updated as the plugins read them', () => {
  // eca-webview src/pages/chat/ChatCommands.tsx switches on `case 'mcpPrompt':` / `case 'native':`;
  // ECA docs/protocol.md ChatCommand type: 'mcpPrompt' | 'native' | 'customPrompt' | 'skill'.
  it('types MCP prompt commands mcpPrompt and patchbay’s own native', async () => {
    const p = boot();
    await p.initialize(workspace());
    await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.name === 'paged' && m.params.status === 'running', 'paged running', 30_000);
    const cmds = (await p.request('chat/queryCommands', { query: '' })).result.commands as Array<{ name: string; type: string; arguments: unknown[] }>;
    expect(cmds.find((c) => c.name === 'paged:two-args')).toMatchObject({
      type: 'mcpPrompt',
      arguments: [
        { name: 'a', required: true },
        { name: 'b', required: false },
      ],
    });
    expect(cmds.find((c) => c.name === 'costs')?.type).toBe('native');
    expect(new Set(cmds.map((c) => c.type))).toEqual(new Set(['mcpPrompt', 'native']));
  });

  // ECA src/eca/handlers.clj `notify-chat-config-state!` sends :variants (or variants []) and
  // :select-variant nil for a model without variants, plus the deprecated :default-model /
  // :default-agent / :default-behavior. eca-emacs eca-chat.el `eca-chat--apply-session-defaults`
  // takes the variant only when `(plist-member chat-config :selectVariant)`: the key must be there, null.
  it('sends variants, selectVariant and the default model and agent', async () => {
    const p = boot({ mcpServers: {}, chat: { generateTitles: false, defaultAgent: 'plan' } });
    await p.initialize(workspace());
    const cfg = await p.waitFor((m) => m.method === 'config/updated', 'config/updated');
    const chat = cfg.params.chat;
    expect(chat).toMatchObject({
      models: ['fake/m1'],
      selectModel: 'fake/m1',
      defaultModel: 'fake/m1',
      selectAgent: 'plan',
      defaultAgent: 'plan',
      selectBehavior: 'plan',
      defaultBehavior: 'plan',
      variants: [],
    });
    expect('selectVariant' in chat && chat.selectVariant === null).toBe(true);
  });
});
