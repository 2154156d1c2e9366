#!/usr/bin/env node
// Two test peers need Node 22: the MCP conformance suite and acpx (the ACP client the ACP
// end-to-end test drives `patchbay acp` with); patchbay and its other tests run on Node 20. Node 22
// comes from the `node` npm package in a small private package of its own (test/conformance/node22),
// beside acpx pinned to an exact version, so its `bin/node` never shadows Node 20 in the root's npm
// scripts. (Re)installed from the lock file when either is missing or not the pinned version
// (`npm test` and .ci/run call this first); prints what it does.
//
// `npm install`, not `npm ci`: acpx depends on @openclaw/fs-safe 0.12.0, whose per-platform
// optional packages were published for Linux x64 only, so the lock cannot name the others and
// `npm ci` refuses it as out of sync. `npm install` installs exactly the locked versions here and
// leaves the lock as it is.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'conformance', 'node22');
const bin = join(dir, 'node_modules', '.bin', process.platform === 'win32' ? 'node.cmd' : 'node');
const acpxManifest = join(dir, 'node_modules', 'acpx', 'package.json');
// The exact acpx version package.json pins: a different one installed (an old lock, a hand
// install) counts as missing, because acpx's flags and exit codes change between versions.
const acpxWanted = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).dependencies.acpx;

function nodeVersion() {
  if (!existsSync(bin)) return undefined;
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

function acpxVersion() {
  if (!existsSync(acpxManifest)) return undefined;
  try {
    return JSON.parse(readFileSync(acpxManifest, 'utf8')).version;
  } catch {
    return undefined;
  }
}

function state() {
  const node = nodeVersion();
  const acpx = acpxVersion();
  return { node, acpx, ok: node?.startsWith('v22.') === true && acpx === acpxWanted };
}

const have = state();
if (have.ok) {
  console.log(`ensure-node22: Node ${have.node} and acpx ${have.acpx} are in ${dir}`);
} else {
  console.log(`ensure-node22: installing Node 22 and acpx ${acpxWanted} (have node ${have.node ?? 'none'}, acpx ${have.acpx ?? 'none'}): npm install --prefix ${dir}`);
  execFileSync('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund'], { stdio: 'inherit', shell: process.platform === 'win32' });
  const now = state();
  if (!now.ok) {
    console.error(`ensure-node22: after the install ${dir} has node ${now.node ?? 'missing'} and acpx ${now.acpx ?? 'missing'}, wanted Node 22 and acpx ${acpxWanted}`);
    process.exit(1);
  }
  console.log(`ensure-node22: Node ${now.node} and acpx ${now.acpx} installed in ${dir}`);
}
