/**
 * What an editor is shown of a configured URL: a provider's in `providers/list` (as eca-emacs
 * `eca-providers--fetch-and-render` in eca-providers.el asks for it and renders `settings`; ECA's
 * `src/eca/features/providers.clj` `build-provider-status`) and a remote MCP server's in
 * `tool/serverUpdated` (eca-emacs `eca-mcp.el` `eca-mcp--handle-mcp-server-updated` keeps each
 * server's entry and shows it in the MCP details buffer; eca-webview `src/protocol.ts`
 * `MCPServerUpdatedParams.url`). A URL may carry a password (`user:password@`) or a key in its
 * query (`?api-key=`: Azure OpenAI, Gemini): neither reaches the editor; host and path do.
 */
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeProviderConfig, refusedPort, tempDir, useFakeLlmSuite, workspace, type Msg } from './harness.js';

const { llm, track } = useFakeLlmSuite();

const PASSWORD = 'pw-do-not-show';
const QUERY_KEY = 'qk-do-not-show';

describe('URLs shown to the editor', () => {
  it('providers/list and tool/serverUpdated send no password and no query value, but host and path', async () => {
    const port = await refusedPort();
    const base = fakeProviderConfig(llm().url);
    const config = {
      ...base,
      providers: {
        ...(base.providers as Record<string, unknown>),
        azure: { api: 'openai-chat', url: `https://me:${PASSWORD}@example.invalid/openai/deployments?api-version=2024&api-key=${QUERY_KEY}`, key: 'k', models: { gpt: {} } },
      },
      // Nothing listens there: the server fails, and its entry (with any error) still goes out.
      mcpServers: { remote: { url: `http://me:${PASSWORD}@127.0.0.1:${port}/mcp/path?api-key=${QUERY_KEY}` } },
    };
    const p = track(new EcaProc({ home: tempDir(), config }));
    await p.initialize(workspace());

    const res = await p.request(ECA.providersList, {});
    expect(res.error).toBeUndefined();
    const azure = (res.result.providers as Array<{ id: string; settings?: { url?: string } }>).find((x) => x.id === 'azure');
    expect(azure?.settings?.url).toBe('https://example.invalid/openai/deployments?api-version=…&api-key=…');

    const isRemote = (m: Msg) => m.method === ECA.toolServerUpdated.method && m.params.name === 'remote';
    await p.waitFor((m) => isRemote(m) && m.params.status === 'failed', 'the remote MCP server failed', 30_000);
    const entries = p.messages.filter(isRemote);
    for (const e of entries) expect(e.params.url).toBe(`http://127.0.0.1:${port}/mcp/path?api-key=…`);

    // Nothing the editor got, in any message, carries either secret.
    const wire = JSON.stringify(p.messages);
    expect(wire.includes(PASSWORD), 'a password reached the editor').toBe(false);
    expect(wire.includes(QUERY_KEY), 'a query value reached the editor').toBe(false);
    // The failure still says where it tried: the error names the host and path.
    expect(entries.at(-1)?.params.error).toContain(`127.0.0.1:${port}/mcp/path`);
  });
});
