/**
 * The two checks the ACP registry's CI runs against an agent before listing it (github.com/
 * agentclientprotocol/registry), run against the built `patchbay acp` the way the registry
 * entry (acp/registry/patchbay/agent.json: `npx patchbay-ai@<version> acp`) starts it, with a fresh
 * HOME and no config:
 *   - .github/workflows/verify_agents.py `verify_npx` / `run_process`: started with stdin on
 *     /dev/null, the agent either keeps running or exits 0;
 *   - .github/workflows/client.py `run_auth_check`: one `initialize` (its exact params below),
 *     and the answer's `authMethods` must hold at least one method of type `agent` or
 *     `terminal` (no type counts as `agent`; `parse_auth_methods`, `validate_auth_methods`),
 *     as AUTHENTICATION.md requires of every listed agent.
 * And the one its build runs on the entry itself: `build_registry.py` `validate_against_schema`,
 * agent.json against the registry's agent.schema.json (vendored: test/fixtures/specs/).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { BIN, cliEnv, runPatchbay, tempDir, useTempDirs } from './harness.js';

const repoFile = (path: string) => new URL(`../../${path}`, import.meta.url);

const scratch = useTempDirs();

/** client.py's initialize request, as it sends it. */
const REGISTRY_INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: 1,
    clientInfo: { name: 'ACP Registry Validator', version: '1.0.0' },
    clientCapabilities: { terminal: true, fs: { readTextFile: true, writeTextFile: true }, _meta: { terminal_output: true, 'terminal-auth': true } },
  },
};

/** Starts `patchbay acp`, sends the registry's initialize, and returns the first line it answers (then closes stdin and waits for the exit). */
async function registryInitialize(home: string): Promise<{ response: any; code: number | null }> {
  const child = spawn(process.execPath, [BIN, 'acp'], { cwd: home, env: cliEnv(home), stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const line = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no initialize answer in 20 s; stderr:\n${err}`)), 20_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        clearTimeout(timer);
        resolve(out.slice(0, nl));
      }
    });
  });
  child.stdin.write(`${JSON.stringify(REGISTRY_INITIALIZE)}\n`);
  try {
    const response = JSON.parse(await line);
    child.stdin.end();
    return { response, code: await exited };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

describe("the ACP registry's schema for patchbay's entry", () => {
  it('acp/registry/patchbay/agent.json validates against the registry’s agent.schema.json; its id is its folder’s name', () => {
    const schema = JSON.parse(readFileSync(repoFile('test/fixtures/specs/acp-registry-agent.schema.json'), 'utf8'));
    const entry = JSON.parse(readFileSync(repoFile('acp/registry/patchbay/agent.json'), 'utf8'));
    // jsonschema (the registry's validator) checks `uri` as a URL: the same here, without a formats package.
    const ajv = new Ajv({ allErrors: true, strict: true }).addFormat('uri', (s: string) => URL.canParse(s));
    const validate = ajv.compile(schema);
    expect(validate(entry), ajv.errorsText(validate.errors)).toBe(true);
    expect(entry.id).toBe('patchbay');
    // And the schema bites: an entry it must refuse is refused.
    expect(validate({ ...entry, id: 'Patch Bay', distribution: { npx: { package: 'patchbay-ai', command: 'x' } } })).toBe(false);
  });
});

describe("the ACP registry's checks against patchbay acp", () => {
  it('launch: with stdin on /dev/null it exits 0 and writes nothing to stdout', async () => {
    const home = scratch(tempDir('pb-reg-home-'));
    const r = await runPatchbay(['acp'], { home, stdin: null });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
  });

  it('initialize (registry params) is answered with protocol 1, and patchbay exits 0 when stdin closes', async () => {
    const home = scratch(tempDir('pb-reg-home-'));
    const { response, code } = await registryInitialize(home);
    expect(response).toMatchObject({ jsonrpc: '2.0', id: 1, result: { protocolVersion: 1 } });
    expect(code).toBe(0);
  });

  it('auth: initialize advertises at least one auth method of type agent or terminal (registry AUTHENTICATION.md)', async () => {
    const home = scratch(tempDir('pb-reg-home-'));
    const { response } = await registryInitialize(home);
    const methods = (response.result?.authMethods ?? []) as Array<{ id: string; type?: string }>;
    expect(methods.filter((m) => (m.type ?? 'agent') === 'agent' || m.type === 'terminal').length).toBeGreaterThan(0);
    // The validator declares terminal auth in `_meta` (its client.py): it is offered `patchbay login`.
    expect(methods).toContainEqual(expect.objectContaining({ type: 'terminal', id: 'login', args: ['login'] }));
  });
});
