/**
 * Cache-stable prompts with every prompt source of issue 18 at once, over the built binary's real
 * stdio against the fake Anthropic server: AGENTS.md, a static and a path-scoped rule, a skill,
 * an MCP server's instructions and a chatStart hook's context. The cached prefix (tools, then the
 * marked system block) must be the same bytes in every request of the chat, whatever the dynamic
 * part (the rule a file brought into play, the hook's context) does.
 *
 * Follows ECA's src/eca/llm_providers/anthropic.clj `chat!` (system blocks: the static
 * instructions marked, the dynamic ones after them; `add-cache-to-last-tool`) and prompt.clj
 * `build-static-instructions` / `build-dynamic-instructions` (what is static and what is not).
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

const PAGED = resolve(import.meta.dirname, '../fixtures/mcp-paged.mjs');
/** Enough text for the stable prefix to pass Anthropic's 1,024-token minimum. */
const SYSTEM = Array.from({ length: 60 }, (_, i) => `- Guideline ${i + 1}: keep functions small, name things for what they do, and test behaviour.`).join('\n');

describe('the cached prefix with rules, skills, MCP instructions and hook context', () => {
  it('tools and the marked system block are the same bytes in every request; only the unmarked rest changes', async () => {
    const root = workspace({
      'AGENTS.md': 'AGENTS-TEXT: use pnpm.',
      '.patchbay/rules/static.md': 'STATIC-RULE: prefer small functions.',
      '.patchbay/rules/ts.md': '---\npaths: "src/**.ts"\n---\nTS-RULE: no default exports.',
      '.agents/skills/deploy/SKILL.md': '---\nname: deploy\ndescription: Deploys the app.\n---\nDEPLOY-BODY: run make deploy.',
      'src/a.ts': 'export const a = 1;\n',
    });
    const p = track(
      new EcaProc({
        home: tempDir(),
        config: {
          providers: { fake: { api: 'anthropic', url: llm().url, key: 'test-key', models: { m1: { limit: { context: 200_000, output: 1000 } } } } },
          defaultModel: 'fake/m1',
          systemPrompt: SYSTEM,
          chat: { generateTitles: false, maxRetries: 0 },
          toolCall: { approval: { byDefault: 'allow' } },
          mcpServers: { paged: { command: process.execPath, args: [PAGED] } },
          hooks: { start: { type: 'chatStart', actions: [{ type: 'shell', shell: `echo '{"additionalContext":"HOOK-CONTEXT: release day"}'` }] } },
        },
      }),
    );
    await p.initialize(root);
    await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.name === 'paged' && m.params.status === 'running', 'the MCP server running');

    llm().script(
      // Turn 1 reads a TypeScript file: the path-scoped rule comes into play (dynamic part).
      [{ toolCall: { id: 'c1', name: 'patchbay__read_file', args: { path: 'src/a.ts' } } }],
      [{ text: 'It exports a.' }],
      // Turn 2 plain; turn 3 loads the skill.
      [{ text: 'two' }],
      [{ toolCall: { id: 'c2', name: 'patchbay__skill', args: { name: 'deploy' } } }],
      [{ text: 'deployed' }],
    );
    const chatId: string = (await p.request(ECA.chatPrompt, { message: 'what is in src/a.ts?' })).result.chatId;
    await p.turnDone(chatId);
    await p.request(ECA.chatPrompt, { chatId, message: 'question two' });
    await p.turnDone(chatId, 2);
    await p.request(ECA.chatPrompt, { chatId, message: 'deploy it' });
    await p.turnDone(chatId, 3);

    const requests = llm().requests.filter((r) => r.path === '/v1/messages');
    expect(requests).toHaveLength(5);
    const first = requests[0].body;
    const stable: string = first.system[0].text;
    // Every source's stable text sits in the marked block…
    // (chatStart's context too: it is set before the chat's first request and stays for the chat.)
    for (const text of ['Guideline 60', 'AGENTS-TEXT', 'STATIC-RULE', 'name="deploy"', 'Use t1 before t2.', 'HOOK-CONTEXT']) expect(stable).toContain(text);
    // …and nothing that may change within the chat does.
    for (const text of ['TS-RULE: no default', 'DEPLOY-BODY']) expect(stable).not.toContain(text);
    expect(first.system[0].cache_control).toEqual({ type: 'ephemeral' });

    const dynamic = new Set<string>();
    requests.forEach((r, i) => {
      expect(JSON.stringify(r.body.tools), `tools of request ${i + 1}`).toBe(JSON.stringify(first.tools));
      expect(r.body.system[0].text, `stable system block of request ${i + 1}`).toBe(stable);
      expect(r.body.system[0].cache_control).toEqual({ type: 'ephemeral' });
      dynamic.add(JSON.stringify(r.body.system.slice(1)));
    });
    // The dynamic part did change (the TS rule came into play), so the test saw what it guards against.
    expect(dynamic.size).toBeGreaterThan(1);
    expect(requests.some((r) => JSON.stringify(r.body.system.slice(1)).includes('TS-RULE'))).toBe(true);
  });
});
