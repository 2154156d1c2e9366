/**
 * `patchbay --help` and `patchbay <command> --help|-h`: the built binary, run as a process. Each
 * command's help names the options its flag parsing really accepts (each one is then passed to
 * the command to show it is accepted), and bad options exit 2 with a pointer to the help.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runPatchbay, tempDir, useTempDirs, type CliRun } from './harness.js';

const scratch = useTempDirs();

/** `patchbay ...args` in a fresh home (its cwd too), removed after the test. */
function run(args: string[], stdin = ''): Promise<CliRun> {
  return runPatchbay(args, { home: scratch(tempDir('pb-help-home-')), stdin });
}

/** Each command, the options its help must name. */
const OPTIONS: Record<string, string[]> = {
  server: ['--log-level', '--config-file', '--help'],
  chat: ['--continue', '--resume', '--model', '--agent', '--yes', '-y', '--json', '--verbose', '--config-file', '--log-level', '--help'],
  doctor: ['--config-file', '--help'],
  models: ['list', 'pull', 'rm', '--config-file', '--help'],
  trust: ['--revoke', '--list', '--help'],
  login: ['--method', '--logout', '--config-file', '--help'],
  tools: ['check', '--trust', '--agent', '--json', '--config-file', '--help'],
};

describe('patchbay --help', () => {
  it('lists every command with its main options, chat’s flags and --config-file included', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    for (const cmd of Object.keys(OPTIONS)) expect(r.stdout).toMatch(new RegExp(`^  patchbay ${cmd}\\b`, 'm'));
    for (const flag of ['--model <provider/model>', '--agent code|plan', '--yes', '--verbose', '--config-file <path>', '--log-level']) expect(r.stdout).toContain(flag);
    expect(r.stdout).toContain('patchbay <command> --help');
    expect(r.stdout.split('\n').every((l) => l.length <= 100)).toBe(true);
    expect((await run(['-h'])).stdout).toBe(r.stdout);
  });

  for (const [cmd, options] of Object.entries(OPTIONS)) {
    it(`patchbay ${cmd} --help and -h print its usage and exit 0`, async () => {
      const long = await run([cmd, '--help']);
      expect(long.code, long.stderr).toBe(0);
      expect(long.stdout).toMatch(new RegExp(`Usage:\\s+patchbay ${cmd}`));
      for (const o of options) expect(long.stdout).toContain(o);
      expect(long.stderr).toBe('');
      const short = await run([cmd, '-h']);
      expect(short.code).toBe(0);
      expect(short.stdout).toBe(long.stdout);
      expect((await run(['help', cmd])).stdout).toBe(long.stdout);
    });

    it(`patchbay ${cmd} with an unknown option exits 2 and points to the help`, async () => {
      const r = await run([cmd, '--frobnicate']);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('Unknown option --frobnicate');
      expect(r.stderr).toContain(`patchbay ${cmd} --help`);
      expect(r.stdout).toBe('');
    });
  }

  it('the documented --config-file is accepted by doctor and models (a missing file is reported, not a usage error)', async () => {
    const dir = scratch(tempDir('pb-help-cfg-'));
    const missing = join(dir, 'none.json');
    for (const args of [
      ['doctor', '--config-file', missing],
      ['models', 'list', '--config-file', missing],
    ]) {
      const r = await run(args);
      expect(r.code, `${args.join(' ')}\n${r.stderr}`).not.toBe(2);
      expect(r.stderr).not.toContain('Unknown option');
    }
  });

  it('an unknown command exits 2 with the overview', async () => {
    const r = await run(['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Unknown command "frobnicate"');
    expect(r.stderr).toContain('patchbay chat');
  });
});
