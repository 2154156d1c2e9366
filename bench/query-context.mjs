// Benchmark for @-mention lookups (chat/queryContext): a 100,000-file workspace, one FileIndex,
// ~500 realistic queries. Target: p95 ≤ 30 ms. Run after `npm run build`:
//   node bench/query-context.mjs
// The workspace is generated once under bench/.work/ (git-ignored) and reused.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { FileIndex } from '../dist/core/context/index.js';

const FILES = 100_000;
const TARGET_P95_MS = 30;
const here = dirname(fileURLToPath(import.meta.url));
const work = join(here, '.work');
const ws = join(work, `ws-${FILES}-v2`);
const doneMarker = `${ws}.done`;

/** Deterministic PRNG (mulberry32), so every run sees the same workspace and queries. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(42);
const pick = (xs) => xs[Math.floor(rand() * xs.length)];

const packages = [
  'core',
  'web',
  'api',
  'cli',
  'server',
  'client',
  'shared',
  'ui-kit',
  'auth',
  'billing',
  'search',
  'analytics',
  'editor',
  'notifications',
  'payments',
  'storage',
  'admin',
  'mobile',
  'docs',
  'infra',
];
const areas = [
  'components',
  'hooks',
  'utils',
  'services',
  'models',
  'controllers',
  'routes',
  'store',
  'lib',
  'helpers',
  'views',
  'pages',
  'features',
  'adapters',
  'middleware',
  'config',
  'types',
  'schemas',
  'workers',
  'tests',
];
const subs = [
  'common',
  'forms',
  'layout',
  'table',
  'modal',
  'auth',
  'user',
  'account',
  'session',
  'cache',
  'queue',
  'events',
  'http',
  'db',
  'parser',
  'render',
  'theme',
  'i18n',
  'metrics',
  'logging',
  'search',
  'upload',
];
const words = [
  'User',
  'Account',
  'Session',
  'Button',
  'Input',
  'Form',
  'Table',
  'Row',
  'Cell',
  'Modal',
  'Dialog',
  'Header',
  'Footer',
  'Sidebar',
  'Menu',
  'Item',
  'List',
  'Card',
  'Avatar',
  'Badge',
  'Token',
  'Parser',
  'Lexer',
  'Render',
  'Theme',
  'Color',
  'Query',
  'Cache',
  'Store',
  'Event',
  'Handler',
  'Request',
  'Response',
  'Client',
  'Server',
  'Router',
  'Route',
  'Config',
  'Logger',
  'Metric',
  'Upload',
  'Download',
  'Payment',
  'Invoice',
  'Order',
  'Cart',
  'Product',
  'Search',
  'Index',
  'Filter',
  'Sort',
  'Page',
  'Layout',
  'Grid',
  'Chart',
  'Graph',
  'Node',
];
const suffixes = ['', 'Service', 'Controller', 'View', 'Provider', 'Context', 'Utils', 'Helper', 'Factory', 'Store', 'Model', 'Spec'];
const exts = ['.ts', '.ts', '.tsx', '.tsx', '.js', '.test.ts', '.css', '.json', '.md', '.go', '.py', '.rs'];

/** Each package uses 10 of the areas. */
function areaOf(pkg) {
  const k = packages.indexOf(pkg);
  return areas[(k * 7 + Math.floor(rand() * 10)) % areas.length];
}

function generate() {
  if (existsSync(doneMarker) && existsSync(ws)) return false;
  rmSync(ws, { recursive: true, force: true });
  mkdirSync(ws, { recursive: true });
  const seen = new Set();
  const madeDirs = new Set();
  while (seen.size < FILES) {
    // ~10 files per folder, 1–4 levels under an area: about 10k folders, like a large monorepo.
    const pkg = pick(packages);
    const parts = ['packages', pkg, 'src', areaOf(pkg)];
    const r = rand();
    if (r > 0.3) parts.push(pick(subs.slice(0, 12)));
    if (r > 0.8) parts.push(pick(['internal', 'legacy', '__tests__']));
    const w1 = pick(words);
    const name = (rand() < 0.4 ? w1 + pick(words) : w1) + pick(suffixes) + pick(exts);
    const rel = `${parts.join('/')}/${name}`;
    if (seen.has(rel)) continue;
    seen.add(rel);
    const dir = join(ws, ...parts);
    if (!madeDirs.has(dir)) {
      mkdirSync(dir, { recursive: true });
      madeDirs.add(dir);
    }
    writeFileSync(join(dir, name), '');
  }
  writeFileSync(join(ws, 'README.md'), '# bench workspace\n');
  writeFileSync(join(ws, '.gitignore'), 'dist/\n*.log\n');
  const git = (...args) => spawnSync('git', args, { cwd: ws, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  // Its own repository, so git never touches an enclosing one.
  if (git('init', '-q').status === 0 && realpathSync(git('rev-parse', '--show-toplevel').stdout.trim()) === realpathSync(ws)) {
    git('add', '-A');
  }
  writeFileSync(doneMarker, `${FILES}\n`);
  return true;
}

/**
 * The `n` queries every run measures (own PRNG and seed, so always the same ones): typed names,
 * initials, path-like, `name.ext`, misses. Also sent over stdio by bench/run.ts.
 */
export function queries(n = 500) {
  const qrand = rng(7);
  const qpick = (xs) => xs[Math.floor(qrand() * xs.length)];
  const out = [];
  const vocab = [...words, ...suffixes.filter(Boolean), ...areas, ...subs, ...packages];
  while (out.length < n) {
    const r = qrand();
    const w = qpick(vocab).toLowerCase();
    if (r < 0.45) {
      out.push(w.slice(0, 1 + Math.floor(qrand() * Math.min(8, w.length)))); // typing a name
    } else if (r < 0.6) {
      const a = qpick(words);
      const b = qpick(words);
      out.push((a[0] + a[1] + b[0] + b[1]).toLowerCase()); // initials-ish: "usse"
    } else if (r < 0.8) {
      out.push(`${qpick(['src', 'packages', qpick(packages)])}/${qpick(areas).slice(0, 2 + Math.floor(qrand() * 3))}`); // path-like
    } else if (r < 0.9) {
      out.push(`${qpick(words).toLowerCase().slice(0, 4)}${qpick(exts)}`.slice(0, 8)); // "butt.tsx"
    } else {
      out.push(qpick(['zzqx', 'xylophon', 'qqq', 'kjhgf', 'wxyz', 'zq', 'jjj', 'qz/xk'])); // misses
    }
  }
  return out;
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export async function run({ log = console.log } = {}) {
  let t0 = performance.now();
  const generated = generate();
  if (generated) log(`generated ${FILES} files in ${((performance.now() - t0) / 1000).toFixed(1)} s under ${ws}`);

  const index = new FileIndex(ws, { watch: false, ttlMs: Number.POSITIVE_INFINITY });
  t0 = performance.now();
  await index.warm();
  const buildMs = performance.now() - t0;
  log(`index: ${index.size} entries (${index.mode} mode), built in ${buildMs.toFixed(0)} ms`);

  const qs = queries();
  for (const q of qs.slice(0, 10)) index.query(q); // JIT warm-up, not measured
  const times = [];
  let hits = 0;
  for (const q of qs) {
    const s = performance.now();
    const r = index.query(q, 50);
    times.push(performance.now() - s);
    if (r.length) hits++;
  }
  index.dispose();
  times.sort((a, b) => a - b);
  const result = {
    p50: +percentile(times, 50).toFixed(2),
    p95: +percentile(times, 95).toFixed(2),
    p99: +percentile(times, 99).toFixed(2),
    buildMs: Math.round(buildMs),
  };
  log(`${qs.length} queries (${hits} with results): p50 ${result.p50} ms, p95 ${result.p95} ms, p99 ${result.p99} ms, max ${times[times.length - 1].toFixed(2)} ms`);
  log(`p95 ≤ ${TARGET_P95_MS} ms: ${result.p95 <= TARGET_P95_MS ? 'yes' : 'NO'}`);
  return result;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await run();
  process.exitCode = r.p95 <= TARGET_P95_MS ? 0 : 1;
}
