#!/usr/bin/env node
// The MCP conformance suite needs Node 22; patchbay and its tests run on Node 20. Node 22 comes
// from the `node` npm package in a small private package of its own (test/conformance/node22), so
// its `bin/node` never shadows Node 20 in the root's npm scripts. Installed when missing
// (`npm test` and .ci/run call this first); prints what it does.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'conformance', 'node22');
const bin = join(dir, 'node_modules', '.bin', process.platform === 'win32' ? 'node.cmd' : 'node');

function version() {
  if (!existsSync(bin)) return undefined;
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

const have = version();
if (have?.startsWith('v22.')) {
  console.log(`ensure-node22: Node ${have} for the conformance suite is at ${bin}`);
} else {
  console.log(`ensure-node22: installing Node 22 for the conformance suite: npm ci --prefix ${dir}`);
  execFileSync('npm', ['ci', '--prefix', dir, '--no-audit', '--no-fund'], { stdio: 'inherit', shell: process.platform === 'win32' });
  const now = version();
  if (!now?.startsWith('v22.')) {
    console.error(`ensure-node22: ${bin} is not Node 22 after the install (${now ?? 'missing'})`);
    process.exit(1);
  }
  console.log(`ensure-node22: Node ${now} installed at ${bin}`);
}
