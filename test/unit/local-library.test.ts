/**
 * Where patchbay looks for node-llama-cpp and what it says when it is not there
 * (src/peers/llm/local-library.ts), on real folder layouts in a temp dir: npm's global prefix,
 * a project's node_modules, a checkout. That the advice really works (the command, run, makes
 * the local model load) is test/e2e/pack-install.test.ts.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NODE_LLAMA_CPP_VERSION, PACKAGE_NAME, findLibrary, installAdvice, installKind, missingLibraryMessage, packageRoot } from '../../src/peers/llm/local-library.js';

const ROOT = resolve(import.meta.dirname, '../..');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function temp(): string {
  const d = mkdtempSync(join(tmpdir(), 'pb-lib-'));
  dirs.push(d);
  return d;
}
function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}
/** patchbay-ai installed at `root` (its package.json and a bundle file); returns that file. */
function patchbayAt(root: string): string {
  write(join(root, 'package.json'), JSON.stringify({ name: PACKAGE_NAME, version: '0.1.0' }));
  const file = join(root, 'dist', 'bundle', 'main.cjs');
  write(file, '');
  return file;
}
const library = (modules: string) => write(join(modules, 'node-llama-cpp', 'package.json'), JSON.stringify({ name: 'node-llama-cpp', version: NODE_LLAMA_CPP_VERSION }));

describe('the names patchbay is published under', () => {
  it('package.json says patchbay-ai and pins the node-llama-cpp the advice names', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; bin: Record<string, string>; optionalDependencies: Record<string, string> };
    expect(pkg.name).toBe(PACKAGE_NAME);
    expect(Object.keys(pkg.bin)).toEqual(['patchbay']);
    expect(pkg.optionalDependencies['node-llama-cpp']).toBe(NODE_LLAMA_CPP_VERSION);
  });

  it('the checkout is found as patchbay-ai from its own sources', () => {
    expect(packageRoot(join(ROOT, 'src', 'peers', 'llm', 'local-library.ts'))).toBe(ROOT);
  });
});

describe('where node-llama-cpp must be', () => {
  it('a global install (<prefix>/lib/node_modules): found nested or beside patchbay; the advice installs into the same prefix', () => {
    const prefix = join(temp(), 'my prefix');
    const root = join(prefix, 'lib', 'node_modules', PACKAGE_NAME);
    const file = patchbayAt(root);
    write(join(prefix, 'bin', 'patchbay'), '');
    expect(installKind(root, 'linux')).toEqual({ kind: 'global', prefix });
    const message = missingLibraryMessage(file);
    expect(message).toBe(
      `The built-in local model needs node-llama-cpp, an optional dependency that is not installed. Add it: npm install -g --prefix "${prefix}" node-llama-cpp@${NODE_LLAMA_CPP_VERSION} (or reinstall patchbay-ai without --omit=optional)`,
    );
    library(join(prefix, 'lib', 'node_modules'));
    expect(findLibrary(root)).toBe(join(prefix, 'lib', 'node_modules', 'node-llama-cpp'));
    expect(missingLibraryMessage(file)).toBeUndefined();
  });

  it('nested in patchbay-ai/node_modules (a full install) counts as installed', () => {
    const root = join(temp(), 'proj', 'node_modules', PACKAGE_NAME);
    const file = patchbayAt(root);
    library(join(root, 'node_modules'));
    expect(missingLibraryMessage(file)).toBeUndefined();
  });

  it('a project install: the advice installs it into that project', () => {
    const project = join(temp(), 'proj');
    const root = join(project, 'node_modules', PACKAGE_NAME);
    const file = patchbayAt(root);
    expect(installKind(root, 'linux')).toEqual({ kind: 'project', dir: project });
    expect(missingLibraryMessage(file)).toContain(`Add it: cd ${project} && npm install node-llama-cpp@${NODE_LLAMA_CPP_VERSION}`);
    library(join(project, 'node_modules'));
    expect(missingLibraryMessage(file)).toBeUndefined();
  });

  it('a checkout: npm install with the optional dependencies', () => {
    const checkout = join(temp(), 'patchbay');
    const file = patchbayAt(checkout);
    expect(installKind(checkout, 'linux')).toEqual({ kind: 'checkout', dir: checkout });
    expect(missingLibraryMessage(file)).toContain(`Add it: cd ${checkout} && npm install --include=optional`);
  });

  it('a global install on Windows (<prefix>/node_modules with patchbay.cmd)', () => {
    const prefix = join(temp(), 'npm');
    const root = join(prefix, 'node_modules', PACKAGE_NAME);
    patchbayAt(root);
    write(join(prefix, 'patchbay.cmd'), '');
    expect(installKind(root, 'win32')).toEqual({ kind: 'global', prefix });
    expect(installAdvice(root, 'win32')).toBe(`npm install -g --prefix ${prefix} node-llama-cpp@${NODE_LLAMA_CPP_VERSION} (or reinstall patchbay-ai without --omit=optional)`);
  });

  it('a node-llama-cpp only a NODE_PATH folder holds does not count (ES module imports ignore NODE_PATH)', () => {
    const base = temp();
    const file = patchbayAt(join(base, 'proj', 'node_modules', PACKAGE_NAME));
    library(join(base, 'elsewhere', 'node_modules'));
    expect(missingLibraryMessage(file)).toContain('is not installed');
  });
});
