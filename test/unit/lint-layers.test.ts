/**
 * The layer rule and the cycle rule of eslint.config.js, run through ESLint's own API on source
 * text placed at real paths of src/: a forbidden import is reported with the layer's message, an
 * allowed one is not, and a cycle through the real tree is found. The typed rules are switched off
 * here (no type program to build): this test is about our layer table, not about ESLint.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const untyped = { '@typescript-eslint/no-floating-promises': 'off', '@typescript-eslint/no-misused-promises': 'off' } as const;
const eslint = new ESLint({ cwd: root, overrideConfig: { languageOptions: { parserOptions: { projectService: false } }, rules: untyped } });
/**
 * The layer tests run without the cycle rule: a probe importing the ECA server would have no-cycle
 * walk the whole import graph behind it (a minute on a busy machine), and the layer rule is what
 * they check. The cycle tests below use the full config.
 */
const layersOnly = new ESLint({
  cwd: root,
  overrideConfig: { languageOptions: { parserOptions: { projectService: false } }, rules: { ...untyped, 'import-x/no-cycle': 'off' } },
});

/** The rule ids and messages ESLint reports for `code` as if it were the file at `file`. */
async function lint(file: string, code: string, engine = layersOnly): Promise<Array<{ rule: string | null; message: string }>> {
  const [result] = await engine.lintText(code, { filePath: path.join(root, file) });
  return result.messages.map((m) => ({ rule: m.ruleId, message: m.message }));
}

const layer = 'import-x/no-restricted-paths';

/** Where the ECA façade's files are: server/eca/ after the house move of issue 30, the root of server/ before it. */
const ecaDir = existsSync(path.join(root, 'src/server/eca/server.ts')) ? 'src/server/eca' : 'src/server';
/** The specifier of ECA's `server.ts` as imported from the folder `fromDir` (relative to the repository). */
const ecaServer = (fromDir: string): string => path.posix.relative(fromDir, `${ecaDir}/server.js`).replace(/^(?!\.)/, './');

describe('the layer rule (eslint.config.js)', () => {
  it('reports core importing the ECA façade, its wire types or the CLI', async () => {
    const found = await lint(
      'src/core/layer-probe.ts',
      [`import '${ecaServer('src/core')}';`, "import type { ChatContent } from '../protocol/eca/content.js';", "import '../cli/flags.js';", 'export type T = ChatContent;'].join('\n'),
    );
    const layerErrors = found.filter((m) => m.rule === layer);
    expect(layerErrors.map((m) => m.message.match(/"([^"]+)"/)?.[1])).toEqual([ecaServer('src/core'), '../protocol/eca/content.js', '../cli/flags.js']);
    expect(layerErrors[0].message).toContain('src/core may import only from itself and util, rpc, protocol, shapes, config');
  });

  it('lets core import the layers below it', async () => {
    const found = await lint('src/core/layer-probe.ts', ["import '../util/guards.js';", "import '../shapes/tool.js';", "import '../config/schema.js';", "import './deps.js';"].join('\n'));
    expect(found).toEqual([]);
  });

  it('reports one peer importing another, and a peer importing core', async () => {
    const found = await lint('src/peers/mcp/layer-probe.ts', ["import '../lsp/index.js';", "import '../../core/deps.js';", "import '../../shapes/tool.js';", "import './adapt.js';"].join('\n'));
    expect(found.filter((m) => m.rule === layer).map((m) => m.message.match(/"([^"]+)"/)?.[1])).toEqual(['../lsp/index.js', '../../core/deps.js']);
  });

  it('keeps util at the bottom and lets the CLI import anything', async () => {
    const util = await lint('src/util/layer-probe.ts', "import '../rpc/framing.js';");
    expect(util.map((m) => m.rule)).toEqual([layer]);
    const cli = await lint('src/cli/layer-probe.ts', [`import '${ecaServer('src/cli')}';`, "import '../protocol/eca/content.js';", "import '../core/deps.js';"].join('\n'));
    expect(cli).toEqual([]);
  });

  it('lets the ECA façade import everything but the CLI and the ACP façade', async () => {
    const found = await lint(
      'src/server/eca/layer-probe.ts',
      [
        "import '../../runtime/workspace.js';",
        "import '../../protocol/eca/content.js';",
        "import '../shared/dispose-within.js';",
        "import '../../cli/flags.js';",
        "import '../acp/acp-server.js';",
      ].join('\n'),
    );
    expect(found.filter((m) => m.rule === layer).map((m) => m.message.match(/"([^"]+)"/)?.[1])).toEqual(['../../cli/flags.js', '../acp/acp-server.js']);
  });

  it('reports the ACP façade importing the ECA façade, and server/shared importing either', async () => {
    const acp = await lint('src/server/acp/layer-probe.ts', [`import '${ecaServer('src/server/acp')}';`, "import '../shared/dispose-within.js';", "import '../../core/deps.js';"].join('\n'));
    expect(acp.filter((m) => m.rule === layer).map((m) => m.message.match(/"([^"]+)"/)?.[1])).toEqual([ecaServer('src/server/acp')]);
    expect(acp.find((m) => m.rule === layer)?.message).toContain('src/server/acp may import only from itself and anything but cli, server/eca');
    const shared = await lint('src/server/shared/layer-probe.ts', [`import '${ecaServer('src/server/shared')}';`, "import '../acp/acp-server.js';", "import '../../runtime/workspace.js';"].join('\n'));
    expect(shared.filter((m) => m.rule === layer).map((m) => m.message.match(/"([^"]+)"/)?.[1])).toEqual([ecaServer('src/server/shared'), '../acp/acp-server.js']);
  });
});

describe('the cycle rule (eslint.config.js)', () => {
  it('finds a cycle closed through the real tree (help.ts is imported by main.ts)', async () => {
    const found = await lint('src/cli/help.ts', "import './main.js';\nexport {};", eslint);
    expect(found.map((m) => m.rule)).toContain('import-x/no-cycle');
  });

  it('does not count a type-only import as a cycle', async () => {
    const found = await lint('src/cli/help.ts', "import type { main } from './main.js';\nexport type M = typeof main;", eslint);
    expect(found.map((m) => m.rule)).not.toContain('import-x/no-cycle');
  });
});
