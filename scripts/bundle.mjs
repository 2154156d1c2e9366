// Bundles the CLI into one CommonJS file, dist/bundle/main.cjs, so `patchbay server` starts fast:
// bin/patchbay compiles it through vm.Script with a V8 code cache (see bin/patchbay), which
// skips parsing and compiling on every start after the first. Large, rarely needed packages
// (the LLM SDKs, html-to-text) and the native addon stay external and load on first use.
import { rmSync } from 'node:fs';
import { build } from 'esbuild';
import { writeBuildInfo } from './build-info.mjs';

rmSync('dist/bundle', { recursive: true, force: true });

await build({
  entryPoints: ['dist/cli/main.js'],
  outfile: 'dist/bundle/main.cjs',
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  minify: true,
  sourcemap: 'linked',
  // import() of external packages becomes require(): the bundle runs as a vm.Script with a code
  // cache, where Node 20 has no dynamic-import loader (users' ES modules: src/util/import-module.ts).
  supported: { 'dynamic-import': false },
  // jsonc-parser's `main` is a UMD build whose require() calls esbuild cannot follow; its ESM build bundles.
  alias: { 'jsonc-parser': './node_modules/jsonc-parser/lib/esm/main.js' },
  external: ['better-sqlite3', 'openai', '@anthropic-ai/sdk', 'html-to-text', 'node-llama-cpp'],
  // The bundle sits at the same depth as dist/cli/*.js, so relative URLs keep working.
  define: { 'import.meta.url': '__pbImportMetaUrl' },
  banner: { js: "const __pbImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
});

// The version and commit `patchbay --version` prints (scripts/build-info.mjs).
writeBuildInfo(process.cwd());
