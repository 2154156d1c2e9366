// Language servers that are slow to load or cannot run, through the built binary and the real
// typescript-language-server: a write waits for the first diagnostics as long as the server is
// still loading (not a fixed 3 s), says so when none could be had, and a server's own error
// reaches the tool result and `patchbay doctor`.
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BIN, cliEnv, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

const MODULES = resolve(import.meta.dirname, '../../node_modules');
const TSLS = join(MODULES, '.bin/typescript-language-server');
const BAD = `export const n: number = "x";\n`;
const NO_TS = /Could not find a valid TypeScript installation/;

function project(): string {
  return workspace(
    {
      'package.json': JSON.stringify({ name: 'fixture', type: 'module', private: true }),
      'tsconfig.json': JSON.stringify({ compilerOptions: { strict: true, module: 'NodeNext', target: 'ES2022', noEmit: true }, include: ['src'] }),
      'src/ok.ts': 'export const one = 1;\n',
    },
    'pb-lsp-ready-',
  );
}

/**
 * A TypeScript install whose tsserver (noting its start in `marker`) starts `delayMs` late (blocking, so tsserver's IPC messages
 * wait in the pipe): a project that loads slowly, deterministically. typescript-language-server
 * answers `initialize` at once and only its first diagnostics are late.
 */
function slowTypescript(delayMs: number, marker?: string): string {
  const dir = join(tempDir('pb-slow-ts-'), 'typescript');
  mkdirSync(join(dir, 'lib'), { recursive: true });
  copyFileSync(join(MODULES, 'typescript/package.json'), join(dir, 'package.json'));
  const real = JSON.stringify(join(MODULES, 'typescript/lib/tsserver.js'));
  const mark = marker ? `require('node:fs').appendFileSync(${JSON.stringify(marker)}, 'started\\n');\n` : '';
  writeFileSync(join(dir, 'lib/tsserver.js'), `${mark}Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${delayMs});\nrequire(${real});\n`);
  return join(dir, 'lib/tsserver.js');
}

/** typescript-language-server where no TypeScript can be found: its bundle alone, outside node_modules. */
function tslsWithoutTypescript(): string {
  const dir = join(tempDir('pb-tsls-'), 'typescript-language-server');
  mkdirSync(join(dir, 'lib'), { recursive: true });
  copyFileSync(join(MODULES, 'typescript-language-server/package.json'), join(dir, 'package.json'));
  copyFileSync(join(MODULES, 'typescript-language-server/lib/cli.mjs'), join(dir, 'lib/cli.mjs'));
  return join(dir, 'lib/cli.mjs');
}

function config(server: Record<string, unknown>): Record<string, unknown> {
  return fakeProviderConfig(llm().url, 'openai-chat', {
    languageServers: {
      typescript: { extensions: ['ts'], ...server },
      // Only the configured one: no second copy found on PATH.
      'typescript-language-server': { disabled: true },
    },
    toolCall: { approval: { byDefault: 'allow' } },
  });
}

function start(cfg: Record<string, unknown>): EcaProc {
  return track(new EcaProc({ home: tempDir(), config: cfg }));
}

/** The text of a tool result as the LLM receives it in the next request. */
function toolMessage(id: string): string {
  const req = llm().requests.find((r) => r.body.messages?.some((m: any) => m.role === 'tool' && m.tool_call_id === id));
  const msg = req?.body.messages.find((m: any) => m.role === 'tool' && m.tool_call_id === id);
  expect(msg, `tool message ${id}`).toBeDefined();
  return typeof msg.content === 'string' ? msg.content : JSON.stringify(msg.content);
}

describe('language server readiness and failures', () => {
  it('write_file on a cold server that loads slowly still reports the type error to the LLM', { timeout: 120_000 }, async () => {
    const root = project();
    // 6 s before tsserver even starts: a fixed 3 s wait after `initialize` sees nothing.
    const p = start(config({ command: TSLS, args: ['--stdio'], initializationOptions: { tsserver: { path: slowTypescript(6000) } }, diagnosticsTimeoutSeconds: 90 }));
    await p.initialize(root);
    llm().script([{ toolCall: { id: 'w', name: 'patchbay__write_file', args: { path: 'src/a.ts', content: BAD } } }], [{ text: 'done' }]);
    const chatId = (await p.request('chat/prompt', { message: 'write it' })).result.chatId;
    await p.turnDone(chatId, 1, 110_000);
    expect(p.text(chatId)).toBe('done');
    const text = toolMessage('w');
    expect(text).toContain('The language server now reports these errors in the file:');
    expect(text).toMatch(/src\/a\.ts:1:14 error \[typescript 2322\] Type 'string' is not assignable to type 'number'\./);
    expect(text).not.toMatch(/not available/);
  });

  it('when the wait for a loading server runs out, the tool result says diagnostics are not available', { timeout: 120_000 }, async () => {
    const root = project();
    const p = start(config({ command: TSLS, args: ['--stdio'], initializationOptions: { tsserver: { path: slowTypescript(20_000) } }, diagnosticsTimeoutSeconds: 4 }));
    await p.initialize(root);
    llm().script([{ toolCall: { id: 'w', name: 'patchbay__write_file', args: { path: 'src/a.ts', content: BAD } } }], [{ text: 'done' }]);
    const chatId = (await p.request('chat/prompt', { message: 'write it' })).result.chatId;
    await p.turnDone(chatId, 1, 60_000);
    const text = toolMessage('w');
    expect(text).toMatch(/Diagnostics: not available — typescript is still loading the project \(waited \d+ s\)\. Do not take the file as free of errors/);
    expect(text).not.toMatch(/now reports these errors/);
  });

  it('an @-mentioned file starts its language server, before any tool call', { timeout: 120_000 }, async () => {
    const root = project();
    const marker = join(tempDir(), 'tsserver-started');
    const p = start(config({ command: TSLS, args: ['--stdio'], initializationOptions: { tsserver: { path: slowTypescript(0, marker) } } }));
    await p.initialize(root);
    llm().script([{ text: 'seen' }]);
    const contexts = [{ type: 'file', path: join(root, 'src/ok.ts') }];
    const chatId = (await p.request('chat/prompt', { message: 'look at this', contexts })).result.chatId;
    await p.turnDone(chatId, 1, 60_000);
    expect(p.text(chatId)).toBe('seen');
    // No tool ran, yet the server for the mentioned file's language is up, and the editor is told.
    const update = await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params?.type === 'lsp' && m.params.name === 'typescript' && m.params.status === 'running', 'lsp running', 60_000);
    expect(update.params).toMatchObject({ command: TSLS, args: ['--stdio'] });
    // tsserver, the last step of its start, ran too.
    for (const end = Date.now() + 60_000; !existsSync(marker);) {
      if (Date.now() > end) throw new Error('the language server was not started for the mentioned file');
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  it("a server that cannot find TypeScript: its own message in write_file's and lsp_hover's results, and in patchbay doctor", { timeout: 120_000 }, async () => {
    const root = project();
    // The built-in entry, run from a copy that finds no TypeScript.
    const cfg = fakeProviderConfig(llm().url, 'openai-chat', {
      languageServers: { 'typescript-language-server': { command: process.execPath, args: [tslsWithoutTypescript(), '--stdio'] } },
      toolCall: { approval: { byDefault: 'allow' } },
    });
    const p = start(cfg);
    await p.initialize(root);
    llm().script(
      [{ toolCall: { id: 'w', name: 'patchbay__write_file', args: { path: 'src/a.ts', content: BAD } } }],
      [{ toolCall: { id: 'h', name: 'patchbay__lsp_hover', args: { path: 'src/ok.ts', line: 1, symbol: 'one' } } }],
      [{ text: 'done' }],
    );
    const chatId = (await p.request('chat/prompt', { message: 'write it' })).result.chatId;
    await p.turnDone(chatId, 1, 60_000);
    expect(p.text(chatId)).toBe('done');
    const written = toolMessage('w');
    const why =
      'typescript-language-server failed: initialize failed: Could not find a valid TypeScript installation. Please ensure that the "typescript" dependency is installed in the workspace or that a valid `tsserver.path` is specified. Exiting. (typescript-language-server needs `typescript@5` installed in the project (npm i -D typescript@5) or globally (npm i -g typescript@5); TypeScript 7 has no tsserver, which typescript-language-server runs)';
    expect(written).toContain(`Diagnostics: not available — ${why}`);
    expect(written).toContain('Do not take the file as free of errors');
    expect(toolMessage('h')).toContain(`lsp_hover failed: ${why}`);
    // The editor hears it too.
    const update = p.messages.find((m) => m.method === 'tool/serverUpdated' && m.params?.name === 'typescript-language-server' && m.params.status === 'failed');
    expect(update?.params.error).toMatch(NO_TS);

    const home = tempDir();
    const { stdout: out } = await promisify(execFile)(process.execPath, [BIN, 'doctor'], {
      cwd: root,
      env: cliEnv(home, { PATCHBAY_CONFIG: JSON.stringify(cfg) }),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(out).toMatch(
      /- typescript-language-server: failed \(.*\)(, \d+ restarts)? — last error: initialize failed: Could not find a valid TypeScript installation\..*; needs `typescript@5` installed in the project \(npm i -D typescript@5\) or globally \(npm i -g typescript@5\); TypeScript 7 has no tsserver/,
    );
  });
});
