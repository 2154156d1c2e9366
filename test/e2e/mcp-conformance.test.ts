/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance) against patchbay's MCP
 * client: for every client scenario, OAuth (`auth/*`) included, the suite starts its scripted
 * server (and authorization server), runs our driver (`patchbay mcp-conformance-client <url>`,
 * scenario in MCP_CONFORMANCE_SCENARIO, extra data in MCP_CONFORMANCE_CONTEXT) and judges the
 * traffic. The driver plays the user as the suite's example client does
 * (examples/clients/typescript/helpers/ConformanceOAuthProvider.ts). The suite needs Node 22: it
 * runs on the one scripts/ensure-node22.mjs installs (test/conformance/node22), our driver on
 * this Node (20). A scenario passes when the suite exits 0: no FAILURE or WARNING check, the
 * client exited 0 and did not time out. test/conformance/expected-failures.json lists the
 * scenarios we know fail, with the reason; the test fails when one of them starts passing (remove
 * it) or when any other scenario fails. Build first (`npm run build`).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, tempDir } from './harness.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SUITE_DIR = join(ROOT, 'node_modules/@modelcontextprotocol/conformance');
const SUITE = join(SUITE_DIR, 'dist/index.js');
const NODE22 = join(ROOT, 'test/conformance/node22/node_modules/.bin/node');
const WRAPPER = join(ROOT, 'test/conformance/client.mjs');
const EXPECTED_FAILURES = join(ROOT, 'test/conformance/expected-failures.json');
/** The suite kills the client after this long; the test allows the suite a bit more. */
const CLIENT_TIMEOUT_MS = 30_000;

interface Check {
  id: string;
  name: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | (string & {});
  description: string;
  errorMessage?: string;
}

interface Outcome {
  passed: boolean;
  code: number | null;
  checks: Check[];
  output: string;
  clientStderr: string;
}

if (!existsSync(NODE22)) throw new Error(`No Node 22 for the conformance suite at ${NODE22}: run \`node scripts/ensure-node22.mjs\` (npm test does)`);
const suiteVersion = (JSON.parse(readFileSync(join(SUITE_DIR, 'package.json'), 'utf8')) as { version: string }).version;
const wantedVersion = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies['@modelcontextprotocol/conformance'].replace(
  /^[\^~]/,
  '',
);

const expectedFailures = JSON.parse(readFileSync(EXPECTED_FAILURES, 'utf8')) as Record<string, string>;

/** Every client scenario the installed suite knows (`conformance list --client`). */
function clientScenarios(): string[] {
  const r = spawnSync(NODE22, [SUITE, 'list', '--client'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`conformance list failed: ${r.stderr}`);
  return r.stdout
    .split('\n')
    .map((l) => /^\s+-\s+(\S+)/.exec(l)?.[1])
    .filter((s): s is string => !!s);
}

/**
 * The command the suite runs (it splits on spaces and appends the URL). `patchbay
 * mcp-conformance-client` once the CLI has the subcommand; until then the wrapper around the
 * tsc output of the same module.
 */
function clientCommand(): string {
  const probe = spawnSync(process.execPath, [BIN, 'mcp-conformance-client'], { encoding: 'utf8', timeout: 15_000 });
  const viaBin = !`${probe.stdout}${probe.stderr}`.includes('Unknown command');
  return viaBin ? `${process.execPath} ${BIN} mcp-conformance-client` : `${process.execPath} ${WRAPPER}`;
}

function runScenario(command: string, scenario: string): Promise<Outcome> {
  const home = tempDir('pb-conformance-home-');
  const out = join(home, 'results');
  mkdirSync(out, { recursive: true });
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    PATCHBAY_HOME: join(home, '.patchbay'),
  };
  const args = [SUITE, 'client', '--command', command, '--scenario', scenario, '--timeout', String(CLIENT_TIMEOUT_MS), '-o', out];
  return new Promise((done, fail) => {
    const p = spawn(NODE22, args, { cwd: home, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    p.stdout.on('data', (d: Buffer) => (output += d.toString()));
    p.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const killer = setTimeout(() => p.kill('SIGKILL'), CLIENT_TIMEOUT_MS + 20_000);
    p.on('error', fail);
    p.on('close', (code) => {
      clearTimeout(killer);
      // -o writes <out>/<scenario>-<timestamp>/{checks.json,stdout.txt,stderr.txt}
      const dir = existsSync(out) ? readdirSync(out).map((d) => join(out, d))[0] : undefined;
      const read = (f: string): string => (dir && existsSync(join(dir, f)) ? readFileSync(join(dir, f), 'utf8') : '');
      const checksText = read('checks.json');
      done({
        passed: code === 0,
        code,
        checks: checksText ? (JSON.parse(checksText) as Check[]) : [],
        output,
        clientStderr: read('stderr.txt'),
      });
    });
  });
}

function explain(o: Outcome): string {
  const bad = o.checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
  return [
    `suite exit code ${o.code}`,
    ...bad.map((c) => `${c.status} ${c.id}: ${c.errorMessage ?? c.description}`),
    `client stderr:\n${o.clientStderr.slice(-3000)}`,
    `suite output (tail):\n${o.output.slice(-3000)}`,
  ].join('\n');
}

const scenarios = clientScenarios();

describe(`MCP conformance suite ${suiteVersion}, every client scenario`, () => {
  it('the installed suite is the version package.json asks for, on Node 22', () => {
    expect(suiteVersion, 'node_modules holds another conformance version than package.json: npm ci').toBe(wantedVersion);
    expect(spawnSync(NODE22, ['--version'], { encoding: 'utf8' }).stdout).toMatch(/^v22\./);
  });

  it('the suite lists client scenarios, OAuth ones included, and every expected failure names one of them', () => {
    expect(scenarios.length).toBeGreaterThan(0);
    expect(scenarios.filter((s) => s.startsWith('auth/')).length).toBeGreaterThan(0);
    const unknown = Object.keys(expectedFailures).filter((s) => !scenarios.includes(s));
    expect(unknown, 'expected-failures.json names scenarios the suite does not run (remove them)').toEqual([]);
    for (const [s, reason] of Object.entries(expectedFailures)) expect(reason.trim(), `reason for ${s}`).not.toBe('');
  });

  const command = clientCommand();

  for (const scenario of scenarios) {
    const reason = expectedFailures[scenario];
    it(
      reason ? `${scenario} fails as expected` : `${scenario} passes`,
      // sse-retry judges reconnection timing (450–700 ms after the stream closes): one retry for a
      // scenario that should pass absorbs a loaded machine; an expected failure gets no second try.
      { timeout: CLIENT_TIMEOUT_MS + 30_000, retry: reason ? 0 : 1 },
      async () => {
        const o = await runScenario(command, scenario);
        if (reason) expect(o.passed, `${scenario} now passes: remove it from test/conformance/expected-failures.json\n${explain(o)}`).toBe(false);
        else expect(o.passed, `${scenario} failed (command: ${command})\n${explain(o)}`).toBe(true);
      },
    );
  }
});
