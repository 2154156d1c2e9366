// Runs `patchbay server` and `patchbay acp` through one initialize each, so bin/patchbay saves the
// V8 code cache of the bundle for both start-up paths at build time; the first real start is then
// as fast as every later one.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const home = mkdtempSync(join(tmpdir(), 'pb-warm-'));
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
  // bin/patchbay writes the cache 300 ms after start-up.
  setTimeout(() => {
    child.stdin.write(frame({ id: 2, method: 'shutdown' }));
    child.stdin.write(frame({ method: 'exit' }));
  }, 800);
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
  acp.stdout.once('data', () => setTimeout(() => acp.stdin.end(), 800));
  const t = setTimeout(() => acp.kill('SIGKILL'), 10_000);
  acp.on('exit', () => {
    clearTimeout(t);
    rmSync(home, { recursive: true, force: true });
  });
}
