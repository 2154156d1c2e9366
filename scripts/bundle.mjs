// Bundles the CLI into dist/bundle/ so `patchbay server` starts fast: one parse of our code and
// zod instead of hundreds of module files. Lazy imports (subcommands, LLM SDKs) stay lazy chunks.
// The native addon (better-sqlite3) stays external.
import { build } from 'esbuild';

await build({
  entryPoints: { main: 'dist/cli/main.js' },
  outdir: 'dist/bundle',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minifySyntax: true,
  minifyWhitespace: true,
  sourcemap: 'linked',
  external: ['better-sqlite3'],
  // Some CommonJS dependencies call require(); give the ESM bundle one.
  banner: { js: "import { createRequire as __pbCreateRequire } from 'node:module'; const require = __pbCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});
