/**
 * `patchbay-ai/provider` from a project outside the checkout, the way the README says to get it
 * from a checkout: `npm link patchbay-ai` / `npm install /path/to/patchbay` put a symlink to the
 * checkout in the project's node_modules (installing the packed tarball is pack-install.test.ts). The project's own script (plain Node, no test code) connects to a
 * running `patchbay server`; a TypeScript project without @types/node type-checks against it.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const ROOT = resolve(import.meta.dirname, '../..');
const { llm, track } = useFakeLlmSuite();

/** A project in a temp dir with the checkout linked into node_modules as patchbay-ai, as `npm link patchbay-ai` leaves it. */
function linkedProject(files: Record<string, string>): string {
  const dir = tempDir('pb-project-');
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(ROOT, join(dir, 'node_modules', 'patchbay-ai'), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'my-provider', private: true, type: 'module' }));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const PROVIDER = `
import { createProvider } from 'patchbay-ai/provider';
const provider = createProvider({
  name: 'linked',
  tools: [{ name: 'shout', description: 'Upper-cases a word', parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
            handler: ({ word }) => word.toUpperCase() + '!' }],
});
const { sessionId } = await provider.connect();
console.log('bound to ' + sessionId);
process.on('SIGTERM', () => provider.close().then(() => process.exit(0)));
`;

describe('the provider SDK as a package', () => {
  it('a project outside the checkout imports patchbay-ai/provider and serves a tool to a running server', async () => {
    const home = tempDir();
    const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url, 'openai-chat', { toolCall: { approval: { byDefault: 'allow' } } }) }));
    await p.initialize(workspace());
    llm().script([{ text: 'hi' }]);
    const chatId = (await p.request('chat/prompt', { message: 'start' })).result.chatId;
    await p.turnDone(chatId);

    const project = linkedProject({ 'provider.mjs': PROVIDER });
    const child = spawn(process.execPath, ['provider.mjs'], {
      cwd: project,
      env: { PATH: process.env.PATH ?? '', HOME: home, PATCHBAY_HOME: join(home, '.patchbay') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise((r) => child.once('exit', r));
    try {
      const up = await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.name === 'linked' && m.params.status === 'running', `the linked provider (its output: ${out})`);
      expect(up.params.tools.map((t: { name: string }) => t.name)).toEqual(['linked__shout']);
      llm().script([{ toolCall: { id: 's1', name: 'linked__shout', args: { word: 'hey' } } }], [{ text: 'done' }]);
      await p.request('chat/prompt', { chatId, message: 'shout hey' });
      await p.turnDone(chatId, 2);
      const called = p.contents(chatId).find((c) => c.content.type === 'toolCalled' && c.content.id === 's1')!.content;
      expect(called.outputs[0].text).toBe('HEY!');
      expect(out).toBe(`bound to ${chatId}\n`);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });

  it('its types check in a TypeScript project without @types/node, through the exports map', () => {
    const project = linkedProject({
      'provider.ts': `
import { createProvider, type ProviderTool } from 'patchbay-ai/provider';
const shout: ProviderTool<{ word: string }> = {
  name: 'shout', description: 'Upper-cases a word',
  parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
  handler: ({ word }) => word.toUpperCase(),
};
const provider = createProvider({ name: 'typed', tools: [shout], env: { PATCHBAY_HOME: '/tmp/x' } });
export const state: string = provider.state;
// @ts-expect-error: a push level the SDK does not know
provider.push('shout-it', 'x');
`,
      'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, types: [] }, files: ['provider.ts'] }),
    });
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    let output = '';
    try {
      execFileSync(process.execPath, [tsc, '-p', project], { encoding: 'utf8', stdio: 'pipe' });
    } catch (e) {
      output = String((e as { stdout?: string }).stdout ?? e);
    }
    expect(output).toBe('');
  });

  it('npm pack ships the built SDK with its types and the CLI, and package.json names them', () => {
    const home = tempDir();
    const json = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: home, npm_config_cache: join(home, '.npm') },
    });
    const files = (JSON.parse(json) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path);
    for (const f of ['package.json', 'bin/patchbay', 'dist/bundle/main.cjs', 'dist/provider/index.js', 'dist/provider/index.d.ts', 'dist/index.d.ts']) expect(files).toContain(f);
    expect(files.filter((f) => f.startsWith('src/') || f.startsWith('test/') || f.endsWith('.map') || f.endsWith('.cache'))).toEqual([]);
    const pkg = JSON.parse(execFileSync('npm', ['pkg', 'get', 'exports', 'main', 'types', 'keywords', '--json'], { cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: home } }));
    expect(pkg.exports['./provider']).toEqual({ types: './dist/provider/index.d.ts', default: './dist/provider/index.js' });
    expect(pkg.main).toBe('./dist/index.js');
    expect(pkg.types).toBe('./dist/index.d.ts');
    expect(pkg.keywords.length).toBeGreaterThan(0);
  });
});
