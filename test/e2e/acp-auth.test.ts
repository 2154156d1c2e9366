/**
 * Logging in over ACP (ACP initialization.mdx "Authentication", registry AUTHENTICATION.md
 * "Terminal Auth"): with no usable model a prompt is `-32000` auth_required carrying the auth
 * methods; the client runs `patchbay login` (the terminal method's args) in a terminal, then calls
 * `authenticate`, and the running `patchbay acp` takes the new login without a restart.
 */
import { describe, expect, it } from 'vitest';
import { methods } from '@agentclientprotocol/sdk';
import { runPatchbay, tempDir, useTempDirs, workspace } from './harness.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { AcpProc, useAcpProcs } from './acp-harness.js';

const scratch = useTempDirs();
const llm = useFakeLlm();
const track = useAcpProcs();
const KEY = 'sk-acp-login-test-key';

describe('patchbay acp: authentication', () => {
  it('no model: auth_required with the terminal login; after `patchbay login` in the terminal, authenticate takes it and the prompt runs', async () => {
    const home = scratch(tempDir());
    const root = scratch(workspace({ 'a.txt': 'a\n' }));
    // Built-in `openai` pointed at the fake: without a key it has no models.
    const config = { providers: { openai: { url: `${llm().url}/v1`, models: { m1: {} } } }, defaultModel: 'openai/m1', chat: { generateTitles: false } };
    const env = { PATCHBAY_SECRET_STORE: 'file' };
    const p = track(new AcpProc({ home, config, env }));
    const init = await p.initialize({ auth: { terminal: true } });
    const login = init.authMethods?.find((m) => 'type' in m && m.type === 'terminal');
    expect(login).toMatchObject({ id: 'login', args: ['login'] });
    const sessionId = await p.newSession(root);
    await expect(p.prompt(sessionId, 'hi')).rejects.toMatchObject({ code: -32000, message: expect.stringContaining('No LLM is configured') as string });
    // Before the login, authenticate still says auth_required.
    await expect(p.agent.request(methods.agent.authenticate, { methodId: 'login' })).rejects.toMatchObject({ code: -32000 });

    // What the client does with the terminal method: run the agent with its args, in a terminal.
    const r = await runPatchbay([...(login as { args: string[] }).args, 'openai', '--method', 'api-key'], {
      home,
      env: { ...env, PATCHBAY_CONFIG: JSON.stringify({ gateway: { port: 0 }, ...config }) },
      stdin: `${KEY}\n`,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(KEY);

    expect(await p.agent.request(methods.agent.authenticate, { methodId: 'login' })).toEqual({});
    llm().script([{ text: 'logged in' }]);
    expect((await p.prompt(sessionId, 'hi')).stopReason).toBe('end_turn');
    expect(p.text(sessionId)).toBe('logged in');
    expect(JSON.stringify(llm().requests.at(-1)?.headers ?? {})).toContain(KEY);
  });

  it('a client without terminal auth is offered only the configured-provider method; an unknown method is invalid params', async () => {
    const home = scratch(tempDir());
    const p = track(new AcpProc({ home }));
    const init = await p.initialize();
    expect(init.authMethods?.map((m) => m.id)).toEqual(['configured']);
    await expect(p.agent.request(methods.agent.authenticate, { methodId: 'nope' })).rejects.toMatchObject({ code: -32602 });
  });
});
