// Language servers through the real server: post-edit diagnostics reach the model, and the
// lsp_* tools answer with file:line — against the real typescript-language-server (devDependency).
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

const TSLS = resolve(import.meta.dirname, '../../node_modules/.bin/typescript-language-server');

const A = `import { add } from './b.js';

const n: number = 1;
export const total = add(n, 2);
`;
const B = `export function add(x: number, y: number): number {
  return x + y;
}
`;

function project(): string {
  return workspace(
    {
      'package.json': JSON.stringify({ name: 'fixture', type: 'module', private: true }),
      'tsconfig.json': JSON.stringify({ compilerOptions: { strict: true, module: 'NodeNext', target: 'ES2022', noEmit: true }, include: ['src'] }),
      'src/a.ts': A,
      'src/b.ts': B,
    },
    'pb-lsp-',
  );
}

function start(): EcaProc {
  return track(
    new EcaProc({
      home: tempDir(),
      config: fakeProviderConfig(llm().url, 'openai-chat', {
        languageServers: {
          typescript: { command: TSLS, args: ['--stdio'], extensions: ['ts'] },
          // Only the configured one: no second copy found on PATH.
          'typescript-language-server': { disabled: true },
        },
        toolCall: { approval: { byDefault: 'allow' } },
      }),
    }),
  );
}

const outputText = (c: { outputs: Array<{ type: string; text?: string }> }) => c.outputs.map((o) => o.text ?? '').join('\n');

describe('language servers through patchbay', () => {
  it('edit_file reports the new type error to the editor and the LLM; lsp tools name file:line', { timeout: 90_000 }, async () => {
    const root = project();
    const p = start();
    await p.initialize(root);
    llm().script(
      // A harmless edit first: it starts the server (cold start is not what this test times).
      [{ toolCall: { id: 'warm', name: 'patchbay__edit_file', args: { path: 'src/b.ts', original_content: 'return x + y;', new_content: 'return x + y; // sum' } } }],
      [{ toolCall: { id: 'bad', name: 'patchbay__edit_file', args: { path: 'src/a.ts', original_content: 'const n: number = 1;', new_content: 'const n: number = "x";' } } }],
      [
        { toolCall: { id: 'def', name: 'patchbay__lsp_definition', args: { path: 'src/a.ts', line: 4, symbol: 'add' } } },
        { toolCall: { id: 'refs', name: 'patchbay__lsp_references', args: { path: 'src/b.ts', line: 1, symbol: 'add' } } },
        { toolCall: { id: 'hover', name: 'patchbay__lsp_hover', args: { path: 'src/a.ts', line: 4, symbol: 'total' } } },
      ],
      [{ text: 'done' }],
    );
    const chatId = (await p.request('chat/prompt', { message: 'break it, then look around' })).result.chatId;
    await p.turnDone(chatId, 1, 60_000);
    expect(p.text(chatId)).toBe('done');
    expect(readFileSync(join(root, 'src/a.ts'), 'utf8')).toContain('const n: number = "x";');

    // The lazily started server is announced to the editor (starting, then running).
    const update = await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params?.type === 'lsp' && m.params.name === 'typescript' && m.params.status === 'running', 'lsp serverUpdated', 1000);
    const announced = p.messages.filter((m) => m.method === 'tool/serverUpdated' && m.params?.type === 'lsp' && m.params.name === 'typescript').map((m) => m.params.status);
    expect(announced).toEqual(['starting', 'running']);
    expect(update.params).toMatchObject({ type: 'lsp', name: 'typescript', command: TSLS, args: ['--stdio'], status: 'running' });

    const called = new Map(
      p
        .contents(chatId)
        .filter((c) => c.content.type === 'toolCalled')
        .map((c) => [c.content.id as string, c.content]),
    );
    expect([...called.keys()].sort()).toEqual(['bad', 'def', 'hover', 'refs', 'warm']);
    for (const c of called.values()) expect(c.error, outputText(c)).toBe(false);

    // The harmless edit reports no errors; the bad one names the error, where it is.
    expect(outputText(called.get('warm')!)).not.toMatch(/language server now reports/);
    const bad = outputText(called.get('bad')!);
    expect(bad).toContain('The language server now reports these errors in the file:');
    expect(bad).toMatch(/^src\/a\.ts:3:7 error \[typescript 2322\] Type 'string' is not assignable to type 'number'\.$/m);

    // The LLM reads the same text in its next request.
    const toolMsgs = (id: string) =>
      llm()
        .requests.at(-1)!
        .body.messages.filter((m: any) => m.role === 'tool' && m.tool_call_id === id);
    const badMsg = toolMsgs('bad');
    expect(badMsg).toHaveLength(1);
    expect(JSON.stringify(badMsg[0].content)).toContain("Type 'string' is not assignable to type 'number'");
    expect(JSON.stringify(badMsg[0].content)).toContain('src/a.ts:3:7');

    expect(outputText(called.get('def')!)).toMatch(/^src\/b\.ts:1:17: export function add\(x: number, y: number\): number \{$/m);
    const refs = outputText(called.get('refs')!)
      .split('\n')
      .map((l) => l.split(': ')[0])
      .sort();
    expect(refs).toEqual(['src/a.ts:1:10', 'src/a.ts:4:22', 'src/b.ts:1:17']);
    expect(outputText(called.get('hover')!)).toContain('const total: number');
    for (const id of ['def', 'refs', 'hover']) expect(JSON.stringify(toolMsgs(id)[0]?.content)).toContain(id === 'hover' ? 'const total: number' : 'src/');
  });

  it('fixing the error reports nothing more', { timeout: 90_000 }, async () => {
    const root = project();
    const p = start();
    await p.initialize(root);
    llm().script(
      [{ toolCall: { id: 'bad', name: 'patchbay__edit_file', args: { path: 'src/a.ts', original_content: 'const n: number = 1;', new_content: 'const n: number = "x";' } } }],
      [{ toolCall: { id: 'fix', name: 'patchbay__edit_file', args: { path: 'src/a.ts', original_content: 'const n: number = "x";', new_content: 'const n: number = 2;' } } }],
      [{ text: 'fixed' }],
    );
    const chatId = (await p.request('chat/prompt', { message: 'break and fix' })).result.chatId;
    await p.turnDone(chatId, 1, 60_000);
    const called = new Map(
      p
        .contents(chatId)
        .filter((c) => c.content.type === 'toolCalled')
        .map((c) => [c.content.id as string, c.content]),
    );
    expect(outputText(called.get('fix')!)).not.toMatch(/language server now reports|not assignable/);
    expect(p.text(chatId)).toBe('fixed');
  });
});
