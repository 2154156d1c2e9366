/**
 * LSP benchmark: time to fresh diagnostics after an edit, through patchbay's LSP peer vs. a
 * client driving typescript-language-server directly — same run, same project, alternating.
 *
 * Each side has its own copy of a small TS project and its own typescript-language-server.
 * Edits alternate between introducing a type error (`const n: number = "x"`) and fixing it.
 *
 * - patchbay: `LspHostImpl` in-process; the file is written, then the clock runs over
 *   `afterFileChange(path)` (read from disk, didChange + didSave, wait for fresh diagnostics)
 *   until it resolves — with the error text for a breaking edit, '' for a fixing one.
 * - direct: vscode-jsonrpc over the server's stdio; the file is written, then the clock runs
 *   from didChange + didSave to the first `publishDiagnostics` for the file that shows the
 *   expected state (the error present / no errors). Also recorded: when that file's
 *   diagnostics then stay quiet for SETTLE_MS — the rule patchbay must apply because
 *   typescript-language-server publishes unversioned diagnostics (syntax, then semantic) and a
 *   generic client cannot know which publish is the last.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node.js';
import { LspHostImpl } from '../src/peers/lsp/index.js';
import { now, ROOT, sleep, summarize, tempDir, type Summary } from './util.js';

const TSLS = join(ROOT, 'node_modules', '.bin', 'typescript-language-server');
const EDITS = Number(process.env.BENCH_LSP_EDITS ?? 20); // of each kind
const WARMUP = Number(process.env.BENCH_LSP_WARMUP ?? 3); // of each kind
/** Patchbay's quiet period for unversioned diagnostics (src/peers/lsp/host.ts SETTLE_MS). */
export const LSP_SETTLE_MS = 250;
export const LSP_TARGET = 1.1;
const ERROR_TEXT = "Type 'string' is not assignable to type 'number'";

const GOOD = `import { add } from './b.js';

const n: number = 1;
export const total = add(n, 2);
`;
const BAD = GOOD.replace('const n: number = 1;', 'const n: number = "x";');
const B = `export function add(x: number, y: number): number {
  return x + y;
}
`;

export interface LspBenchResult {
  edits: number;
  patchbay: Summary;
  /** First matching publishDiagnostics. */
  direct: Summary;
  /** First matching publish, then SETTLE_MS quiet (patchbay's rule). */
  directSettled: Summary;
  patchbayBreak: Summary;
  patchbayFix: Summary;
  directBreak: Summary;
  directFix: Summary;
}

function project(): { root: string; file: string } {
  const root = tempDir('pb-bench-lsp-');
  mkdirSync(join(root, 'src'));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'fixture', type: 'module', private: true }));
  writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, module: 'NodeNext', target: 'ES2022', noEmit: true }, include: ['src'] }));
  writeFileSync(join(root, 'src/a.ts'), GOOD);
  writeFileSync(join(root, 'src/b.ts'), B);
  return { root, file: join(root, 'src/a.ts') };
}

// ---------------------------------------------------------------- through patchbay

const quiet = { error() {}, warn() {}, info() {}, debug() {} };

class ViaPatchbay {
  readonly host: LspHostImpl;
  constructor(
    readonly root: string,
    readonly file: string,
  ) {
    this.host = new LspHostImpl({
      servers: { typescript: { command: TSLS, args: ['--stdio'], extensions: ['ts'] }, 'typescript-language-server': { disabled: true } },
      roots: [root],
      env: process.env,
      log: quiet,
      diagnosticsWaitMs: 20_000,
    });
  }

  async edit(broken: boolean): Promise<number> {
    writeFileSync(this.file, broken ? BAD : GOOD);
    const t = now();
    const out = (await this.host.afterFileChange(this.file, new AbortController().signal)).note;
    const dt = now() - t;
    if (broken !== out.includes(ERROR_TEXT)) throw new Error(`patchbay after a ${broken ? 'breaking' : 'fixing'} edit reported ${JSON.stringify(out)}`);
    return dt;
  }

  dispose(): Promise<void> {
    return this.host.dispose();
  }
}

// ---------------------------------------------------------------- directly

interface Publish {
  uri: string;
  diagnostics: Array<{ message: string; severity?: number }>;
}

class Direct {
  private child!: ChildProcess;
  private conn!: MessageConnection;
  private version = 1;
  private readonly uri: string;
  private onPublish: ((p: Publish) => void) | undefined;

  constructor(
    readonly root: string,
    readonly file: string,
  ) {
    this.uri = pathToFileURL(file).href;
  }

  async start(): Promise<void> {
    this.child = spawn(TSLS, ['--stdio'], { cwd: this.root, stdio: ['pipe', 'pipe', 'ignore'] });
    this.conn = createMessageConnection(new StreamMessageReader(this.child.stdout!), new StreamMessageWriter(this.child.stdin!));
    this.conn.onNotification('textDocument/publishDiagnostics', (p: Publish) => this.onPublish?.(p));
    // Answer the requests a server may make, as a minimal client would.
    this.conn.onRequest('workspace/configuration', (p: { items: unknown[] }) => p.items.map(() => null));
    this.conn.onRequest('client/registerCapability', () => null);
    this.conn.onRequest('window/workDoneProgress/create', () => null);
    this.conn.listen();
    const rootUri = pathToFileURL(this.root).href;
    await this.conn.sendRequest('initialize', {
      processId: process.pid,
      rootUri,
      workspaceFolders: [{ uri: rootUri, name: 'bench' }],
      capabilities: {
        textDocument: {
          synchronization: { dynamicRegistration: false, didSave: true },
          publishDiagnostics: { relatedInformation: false, versionSupport: true },
        },
        workspace: { workspaceFolders: true, configuration: true },
      },
    });
    await this.conn.sendNotification('initialized', {});
    const first = this.next(() => true);
    await this.conn.sendNotification('textDocument/didOpen', { textDocument: { uri: this.uri, languageId: 'typescript', version: this.version, text: readFileSync(this.file, 'utf8') } });
    await first.match;
  }

  /** The first publish for the file satisfying `ok`, and when the file's diagnostics then went quiet for SETTLE_MS. */
  private next(ok: (p: Publish) => boolean): { match: Promise<number>; settled: Promise<number> } {
    let resolveMatch!: (t: number) => void;
    let resolveSettled!: (t: number) => void;
    let rejectAll!: (e: Error) => void;
    const match = new Promise<number>((res, rej) => ((resolveMatch = res), (rejectAll = rej)));
    const settled = new Promise<number>((res, rej) => {
      resolveSettled = res;
      const prev = rejectAll;
      rejectAll = (e) => (prev(e), rej(e));
    });
    let matched = false;
    let last = 0;
    let timer: NodeJS.Timeout | undefined;
    const deadline = setTimeout(() => ((this.onPublish = undefined), rejectAll(new Error('direct: no matching publishDiagnostics in 20 s'))), 20_000);
    this.onPublish = (p) => {
      if (p.uri !== this.uri) return;
      const t = now();
      if (!matched) {
        if (!ok(p)) return;
        matched = true;
        resolveMatch(t);
      }
      last = t;
      clearTimeout(timer);
      timer = setTimeout(() => {
        clearTimeout(deadline);
        this.onPublish = undefined;
        resolveSettled(last + LSP_SETTLE_MS);
      }, LSP_SETTLE_MS);
    };
    return { match, settled };
  }

  async edit(broken: boolean): Promise<{ match: number; settled: number }> {
    const text = broken ? BAD : GOOD;
    writeFileSync(this.file, text);
    const hasError = (p: Publish) => p.diagnostics.some((d) => (d.severity ?? 1) === 1 && d.message.includes(ERROR_TEXT));
    const noErrors = (p: Publish) => !p.diagnostics.some((d) => (d.severity ?? 1) === 1);
    const t = now();
    const w = this.next(broken ? hasError : noErrors);
    this.version += 1;
    await this.conn.sendNotification('textDocument/didChange', { textDocument: { uri: this.uri, version: this.version }, contentChanges: [{ text }] });
    await this.conn.sendNotification('textDocument/didSave', { textDocument: { uri: this.uri } });
    const match = (await w.match) - t;
    const settled = (await w.settled) - t;
    return { match, settled };
  }

  async stop(): Promise<void> {
    try {
      await Promise.race([this.conn.sendRequest('shutdown'), sleep(2000)]);
      await this.conn.sendNotification('exit');
    } catch {
      /* already gone */
    }
    this.conn.dispose();
    await Promise.race([new Promise((r) => this.child.once('exit', r)), sleep(2000)]);
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}

// ---------------------------------------------------------------- run

export async function runLsp(log: (s: string) => void): Promise<LspBenchResult> {
  log(`lsp: time to fresh diagnostics after an edit, ${EDITS} breaking + ${EDITS} fixing edits (after ${WARMUP} + ${WARMUP} warm-up), patchbay LspHost vs typescript-language-server directly…`);
  const a = project();
  const b = project();
  const pb = new ViaPatchbay(a.root, a.file);
  const direct = new Direct(b.root, b.file);
  try {
    // Warm up: start both servers, let tsserver load the project.
    await pb.host.afterFileChange(a.file, new AbortController().signal);
    await direct.start();
    const pbTimes: Record<'break' | 'fix', number[]> = { break: [], fix: [] };
    const dTimes: Record<'break' | 'fix', number[]> = { break: [], fix: [] };
    const dSettled: number[] = [];
    for (let i = 0; i < WARMUP + EDITS; i++) {
      for (const broken of [true, false]) {
        const kind = broken ? 'break' : 'fix';
        // Alternate which side goes first, so neither always follows the other's CPU burst.
        const pbFirst = i % 2 === 0;
        let p = 0;
        let d = { match: 0, settled: 0 };
        if (pbFirst) {
          p = await pb.edit(broken);
          d = await direct.edit(broken);
        } else {
          d = await direct.edit(broken);
          p = await pb.edit(broken);
        }
        if (i < WARMUP) continue;
        pbTimes[kind].push(p);
        dTimes[kind].push(d.match);
        dSettled.push(d.settled);
      }
    }
    const all = (r: Record<'break' | 'fix', number[]>) => [...r.break, ...r.fix];
    return {
      edits: EDITS * 2,
      patchbay: summarize(all(pbTimes)),
      direct: summarize(all(dTimes)),
      directSettled: summarize(dSettled),
      patchbayBreak: summarize(pbTimes.break),
      patchbayFix: summarize(pbTimes.fix),
      directBreak: summarize(dTimes.break),
      directFix: summarize(dTimes.fix),
    };
  } finally {
    await Promise.all([pb.dispose(), direct.stop()]);
  }
}
