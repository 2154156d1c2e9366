// Runs `patchbay server` and `patchbay acp` through one initialize each, so bin/patchbay saves the
// V8 code cache of the bundle for both start-up paths at build time; the first real start is then
// as fast as every later one.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const home = mkdtempSync(join(tmpdir(), 'pb-warm-'));
const bundle = join('dist', 'bundle', 'main.cjs');

/**
 * Calls `then` once bin/patchbay has written `cacheFile`: it does so while it handles initialize,
 * before the answer goes out, so the file is normally there at the first byte of the answer.
 */
function whenSaved(cacheFile, then) {
  const end = Date.now() + 5_000;
  const check = () => (existsSync(cacheFile) || Date.now() > end ? then() : setTimeout(check, 20));
  check();
}

const child = spawn(process.execPath, ['bin/patchbay', 'server'], {
  stdio: ['pipe', 'pipe', 'ignore'],
  env: { ...process.env, PATCHBAY_HOME: home, PATCHBAY_CONFIG: '{}' },
});
const frame = (msg) => {
  const body = JSON.stringify({ jsonrpc: '2.0', ...msg });
  return `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
};
child.stdin.write(frame({ id: 1, method: 'initialize', params: { processId: null, capabilities: {}, workspaceFolders: [] } }));
child.stdout.once('data', () => {
  child.stdin.write(frame({ method: 'initialized', params: {} }));
  whenSaved(`${bundle}.${process.version}.cache`, () => {
    child.stdin.write(frame({ id: 2, method: 'shutdown' }));
    child.stdin.write(frame({ method: 'exit' }));
  });
});
const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
child.on('exit', () => {
  clearTimeout(timer);
  warmAcp();
});

/** The ACP path: newline-delimited JSON-RPC; closing stdin ends it. */
function warmAcp() {
  const acp = spawn(process.execPath, ['bin/patchbay', 'acp'], {
    stdio: ['pipe', 'pipe', 'ignore'],
    env: { ...process.env, PATCHBAY_HOME: home, PATCHBAY_CONFIG: '{}' },
  });
  acp.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } })}\n`);
  acp.stdout.once('data', () => whenSaved(`${bundle}.acp.${process.version}.cache`, () => acp.stdin.end()));
  const t = setTimeout(() => acp.kill('SIGKILL'), 10_000);
  acp.on('exit', () => {
    clearTimeout(t);
    rmSync(home, { recursive: true, force: true });
  });
}
