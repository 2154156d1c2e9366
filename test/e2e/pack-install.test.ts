/**
 * The package as a user gets it: `npm pack` of the built checkout, installed from the tarball
 * into a clean global prefix (`npm install -g --prefix <tmp>`, the README's way) and into a
 * temp project with `--omit=optional`, then run from the installed bin with cwd and HOME
 * outside the checkout: `patchbay --help`, `patchbay doctor`, a chat on the local model, and
 * `import('patchbay-ai/provider')` from the project.
 *
 * Without node-llama-cpp (the project install; `-g` ignores --omit=optional, npm/cli#8284, so the
 * global variant has it removed, as when its optional install failed), doctor and chat say how
 * to add it, and the command they print is run and makes the local model work.
 *
 * Offline but for the npm registry: the dependencies come from the npm cache (`--prefer-offline`;
 * `npm ci` left their tarballs there; the registry is asked for package metadata the cache
 * lacks). better-sqlite3's install script runs as for any user, and finds the checkout's own
 * compiled binary as a local prebuild (prebuild-install's `local-prebuilds`, the name it would
 * download), so it is not compiled again (minutes on 2 cores); with no such binary it compiles.
 * The user's npm config (registry, CA file, nodedir for node-gyp) is passed on by path.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join, resolve, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeTinyGguf } from '../../scripts/make-tiny-gguf.mjs';
import { tempDir } from './harness.js';

const ROOT = resolve(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; optionalDependencies: Record<string, string> };
const LLAMA = `node-llama-cpp@${pkg.optionalDependencies['node-llama-cpp']}`;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program to its exit and collects its output (SIGKILL and reject after `timeoutMs`). */
function run(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; stdin?: string; timeoutMs?: number }): Promise<Run> {
  const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(opts.stdin ?? '');
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${cmd} ${args.join(' ')} did not exit in ${opts.timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, opts.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The environment of a user's shell, with nothing of this run in it: no npm_* variables (under
 * `npm test` they point npm at the checkout), no patchbay or provider settings, no checkout
 * folder on PATH; this Node first on PATH (the bin's `#!/usr/bin/env node`).
 */
function userEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(npm_|PATCHBAY_|INIT_CWD$|OPENAI_|ANTHROPIC_|OLLAMA_|VITEST)/i.test(k)) continue;
    env[k] = v;
  }
  const path = (process.env.PATH ?? '').split(delimiter).filter((p) => p && !(p === ROOT || p.startsWith(ROOT + sep)));
  return { ...env, PATH: [dirname(process.execPath), ...path].join(delimiter), HOME: home, ...extra };
}

let work: string;
let tarball: string;
let npmEnv: NodeJS.ProcessEnv;
/** The global prefix (full install) and the project (--omit=optional). */
let prefix: string;
let project: string;
let home: string;
let tiny: string;

const npm = (args: string[], cwd: string, timeoutMs = 600_000) => run('npm', [...args, '--prefer-offline', '--no-audit', '--no-fund'], { cwd, env: npmEnv, timeoutMs });
const globalBin = () => join(prefix, 'bin', 'patchbay');
const projectBin = () => join(project, 'node_modules', '.bin', 'patchbay');
/** patchbay as a user runs it: cwd and HOME outside the checkout, no key, the gateway on a free port. */
const patchbay = (bin: string, args: string[], extra: Record<string, string> = {}) =>
  run(bin, args, { cwd: join(work, 'somewhere'), env: userEnv(home, { PATCHBAY_CONFIG: JSON.stringify({ gateway: { port: 0 } }), ...extra }), timeoutMs: 90_000 });
/** A one-shot chat on the tiny GGUF model (scripts/make-tiny-gguf.mjs), which needs node-llama-cpp. */
const tinyChat = (bin: string) =>
  patchbay(bin, ['chat', 'hello'], {
    PATCHBAY_LOCAL_MODEL: tiny,
    // Its tokenizer spends a token per character: the tools and system prompt need 16k (local.test.ts).
    PATCHBAY_CONFIG: JSON.stringify({
      gateway: { port: 0 },
      chat: { generateTitles: false },
      providers: { local: { models: { tiny: { contextSize: 16384, limit: { context: 16384, output: 48 } } } } },
    }),
  });
const adviceIn = (text: string) => /Add it: (.+?) \(or reinstall/.exec(text)?.[1];

beforeAll(async () => {
  work = tempDir('pb-pack-');
  home = join(work, 'home');
  mkdirSync(join(work, 'somewhere'), { recursive: true });
  mkdirSync(home);
  tiny = writeTinyGguf(join(work, 'tiny.gguf')).path;

  // The user's npm config, asked of npm with the real HOME, handed over by path once HOME moves.
  const cfg = await run('npm', ['config', 'get', 'cache', 'userconfig', 'globalconfig'], { cwd: work, env: userEnv(process.env.HOME ?? home) });
  const conf = Object.fromEntries(cfg.stdout.split('\n').flatMap((l) => (l.includes('=') ? [[l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]] : [])));
  expect(conf.cache, cfg.stderr).toBeTruthy();
  const extra: Record<string, string> = {
    npm_config_cache: conf.cache,
    npm_config_userconfig: conf.userconfig,
    npm_config_globalconfig: conf.globalconfig,
    npm_config_logs_dir: join(work, 'npm-logs'),
    npm_config_update_notifier: 'false',
  };
  // The checkout's compiled better-sqlite3, packed under the name prebuild-install downloads.
  const sqlite = join(ROOT, 'node_modules', 'better-sqlite3');
  const built = join(sqlite, 'build', 'Release', 'better_sqlite3.node');
  if (existsSync(built)) {
    const version = (JSON.parse(readFileSync(join(sqlite, 'package.json'), 'utf8')) as { version: string }).version;
    const prebuilds = join(work, 'prebuilds');
    mkdirSync(prebuilds);
    const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
    const tar = await run('tar', ['-czf', join(prebuilds, name), '-C', sqlite, 'build/Release/better_sqlite3.node'], { cwd: work, env: process.env });
    expect(tar.code, tar.stderr).toBe(0);
    extra.npm_config_better_sqlite3_local_prebuilds = prebuilds;
  }
  npmEnv = userEnv(home, extra);

  // The checkout is built before the e2e tier; --ignore-scripts: packing must not rebuild it.
  const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: ROOT, env: npmEnv });
  expect(packed.code, packed.stderr).toBe(0);
  const info = (JSON.parse(packed.stdout) as Array<{ filename: string; size: number; unpackedSize: number; entryCount: number; files: Array<{ path: string }> }>)[0]!;
  tarball = join(work, info.filename);
  expect(info.filename).toBe(`${pkg.name}-${pkg.version}.tgz`);
  const files = info.files.map((f) => f.path);
  for (const f of ['package.json', 'README.md', 'bin/patchbay', 'dist/bundle/main.cjs', 'dist/index.js', 'dist/provider/index.js', 'dist/provider/index.d.ts']) expect(files).toContain(f);
  // Nothing the runtime does not read: no sources, tests, maps, code caches, registry entry, docs.
  expect(files.filter((f) => /^(src|test|bench|scripts|acp|docs|node_modules)\/|\.map$|\.cache$/.test(f))).toEqual([]);
  // What a user downloads stays small (1.4 MB, 804 files when this was written).
  expect(info.size).toBeLessThan(4_000_000);

  prefix = join(work, 'prefix');
  project = join(work, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'my-provider', private: true, type: 'module' }));
  const [global, local] = await Promise.all([npm(['install', '-g', '--prefix', prefix, tarball], work), npm(['install', '--omit=optional', tarball], project)]);
  expect(global.code, global.stderr).toBe(0);
  expect(local.code, local.stderr).toBe(0);
}, 900_000);

// Three installs of about a gigabyte each: gone as soon as the file is done, not at the end of the run.
afterAll(() => rmSync(work, { recursive: true, force: true }), 300_000);

describe('the packed package, installed globally (npm install -g)', () => {
  it('`patchbay --help` and `patchbay doctor` run from the installed bin, and the local model answers', async () => {
    const help = await patchbay(globalBin(), ['--help']);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('patchbay chat');
    const doctor = await patchbay(globalBin(), ['doctor']);
    expect(doctor.code, doctor.stderr).toBe(0);
    expect(doctor.stdout).toContain(`Home: ${join(home, '.cache', 'patchbay')}`);
    expect(doctor.stdout).toContain(`Workspace: ${join(work, 'somewhere')}`);
    expect(doctor.stdout).toContain('Default model: local/qwen2.5-coder-1.5b');
    expect(doctor.stdout).not.toContain('unavailable');
    // node-llama-cpp from the install's node_modules, better-sqlite3 storing the chat.
    const chat = await tinyChat(globalBin());
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout.trim()).toMatch(/^[a-z ]{20,}/);
    expect(existsSync(join(home, '.cache', 'patchbay', 'patchbay.db'))).toBe(true);
  }, 180_000);
});

describe('the packed package in a project, installed with --omit=optional', () => {
  it('the project imports patchbay-ai/provider and patchbay-ai', async () => {
    const code =
      "const p = await import('patchbay-ai/provider'); const m = await import('patchbay-ai'); console.log(typeof p.createProvider, typeof m.EcaServer, import.meta.resolve('patchbay-ai/provider'));";
    const r = await run(process.execPath, ['--input-type=module', '-e', code], { cwd: project, env: userEnv(home), timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(`function function file://${join(project, 'node_modules', pkg.name, 'dist', 'provider', 'index.js')}`);
  });

  it('doctor says the local model is unavailable and how to add it; `patchbay chat` with no key says so too, exit 1, no stack', async () => {
    expect(existsSync(join(project, 'node_modules', 'node-llama-cpp'))).toBe(false);
    const doctor = await patchbay(projectBin(), ['doctor']);
    expect(doctor.code, doctor.stderr).toBe(0);
    expect(doctor.stdout).toContain('local/qwen2.5-coder-1.5b: hf:Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf — unavailable (node-llama-cpp is not installed)');
    expect(adviceIn(doctor.stdout)).toBe(`cd ${project} && npm install ${LLAMA}`);

    const chat = await patchbay(projectBin(), ['chat', 'hello']);
    expect(chat.code).toBe(1);
    expect(chat.stderr).toContain(
      `The built-in local model needs node-llama-cpp, an optional dependency that is not installed. Add it: cd ${project} && npm install ${LLAMA} (or reinstall patchbay-ai there without --omit=optional)`,
    );
    expect(chat.stderr).toContain('Or use another model: set OPENAI_API_KEY or ANTHROPIC_API_KEY');
    expect(chat.stderr).not.toMatch(/\n\s+at /);
    // It said so before fetching a gigabyte of model.
    expect(existsSync(join(home, '.cache', 'patchbay', 'models'))).toBe(false);
  }, 120_000);
});

describe('the command patchbay prints adds node-llama-cpp where it imports it from', () => {
  it('for the project and for the global prefix (its node-llama-cpp removed, as when its optional install failed); the local model then answers', async () => {
    const nested = join(prefix, 'lib', 'node_modules', pkg.name, 'node_modules');
    rmSync(join(nested, 'node-llama-cpp'), { recursive: true, force: true });
    rmSync(join(nested, '@node-llama-cpp'), { recursive: true, force: true });
    const bins = [projectBin(), globalBin()];
    const advice = await Promise.all(bins.map(async (bin) => adviceIn((await patchbay(bin, ['doctor'])).stdout)));
    expect(advice).toEqual([`cd ${project} && npm install ${LLAMA}`, `npm install -g --prefix ${prefix} ${LLAMA}`]);
    // Run as printed (from elsewhere), the two at once: each copies about 700 MB of prebuilt binaries.
    const added = await Promise.all(advice.map((cmd) => run('sh', ['-c', `${cmd} --prefer-offline --no-audit --no-fund`], { cwd: join(work, 'somewhere'), env: npmEnv, timeoutMs: 600_000 })));
    for (const a of added) expect(a.code, a.stderr).toBe(0);
    for (const bin of bins) {
      expect((await patchbay(bin, ['doctor'])).stdout).not.toContain('unavailable');
      const chat = await tinyChat(bin);
      expect(chat.code, chat.stderr).toBe(0);
      expect(chat.stdout.trim()).toMatch(/^[a-z ]{20,}/);
    }
  }, 660_000);
});
