/**
 * The OpenCtx client against real providers: local HTTP servers and JS modules under
 * test/fixtures/openctx/, including ones that hang, fail, answer garbage or cannot load.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { OpenCtxClient, openCtxConfigSchema, renderAnnotations, type MentionBatch, type OpenCtxConfigInput } from '../../src/peers/openctx/client/index.js';
import type { Logger } from '../../src/util/log.js';
import { mentionsAnswer, startHttpProvider, type HttpProvider } from '../fixtures/openctx/http-provider.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'openctx');
const fx = (name: string): string => join(fixtures, name);
const DEADLINE = 300;
const SLACK = 150;

const servers: HttpProvider[] = [];
const clients: OpenCtxClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.dispose();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function http(...args: Parameters<typeof startHttpProvider>): Promise<HttpProvider> {
  const s = await startHttpProvider(...args);
  servers.push(s);
  return s;
}

function recordingLog(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const rec = (l: string) => (m: string) => void lines.push(`${l} ${m}`);
  return { lines, error: rec('error'), warn: rec('warn'), info: rec('info'), debug: rec('debug') };
}

function client(config: OpenCtxConfigInput, roots: string[] = [fixtures]): OpenCtxClient & { logs: ReturnType<typeof recordingLog> } {
  const log = recordingLog();
  const c = Object.assign(new OpenCtxClient({ config, roots, log }), { logs: log });
  clients.push(c);
  return c;
}

async function timed<T>(p: Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await p;
  return { value, ms: performance.now() - t0 };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('openctx config', () => {
  it('applies defaults and keeps provider order', () => {
    expect(openCtxConfigSchema.parse({ providers: { 'https://b': true, './a.mjs': { k: 1 } } })).toEqual({
      providers: { 'https://b': true, './a.mjs': { k: 1 } },
      autoInclude: [],
      timeoutMs: 5000,
    });
  });
  it('rejects bad values with the field named', () => {
    const r = openCtxConfigSchema.safeParse({ providers: { x: 'yes' }, timeoutMs: -1 });
    expect(r.success).toBe(false);
    expect(r.error!.issues.map((i) => i.path.join('.'))).toEqual(expect.arrayContaining(['providers.x', 'timeoutMs']));
  });
  it('`false` disables a provider: it is never called', async () => {
    const off = await http(mentionsAnswer('off', ['x']));
    const c = client({ providers: { [off.url]: false, [fx('notes-provider.mjs')]: true } });
    expect((await c.mentions('')).map((m) => m.server)).toEqual(['openctx:notes', 'openctx:notes', 'openctx:notes']);
    expect(off.requests).toEqual([]);
    expect(c.status().map((s) => s.provider)).toEqual([fx('notes-provider.mjs')]);
  });
});

describe('meta', () => {
  it('is fetched once per provider and cached until dispose; a new client fetches again', async () => {
    const p = await http(mentionsAnswer('cached', ['a']));
    const c = client({ providers: { [p.url]: true } });
    await c.mentions('a');
    await c.mentions('b');
    await c.meta();
    expect(p.requests.filter((r) => r.method === 'meta')).toHaveLength(1);
    expect(c.status()).toEqual([{ provider: p.url, name: 'cached', ok: true }]);
    c.dispose();
    expect(await c.mentions('a')).toEqual([]);
    const c2 = client({ providers: { [p.url]: true } });
    await c2.mentions('a');
    expect(p.requests.filter((r) => r.method === 'meta')).toHaveLength(2);
  });

  it('reports name and capabilities of HTTP and module providers, and the old selector field', async () => {
    const p = await http(mentionsAnswer('remote', []));
    const c = client({ providers: { [p.url]: true, [fx('notes-provider.mjs')]: true, [fx('old-style-provider.mjs')]: true } });
    const metas = await c.meta();
    expect(metas.map((m) => m.name)).toEqual(['remote', 'notes', 'old-style-provider']);
    expect(metas[1]!.meta).toMatchObject({ mentions: {}, annotations: { selectors: [{ path: '**/*.ts', contentContains: 'TODO' }] } });
    expect(metas[2]!.meta).toMatchObject({ selector: [{ path: '**/*.md' }] });
  });

  it('a failed meta is retried on the next call instead of being cached', async () => {
    let fail = true;
    const p = await http((req) => {
      if (req.method === 'meta' && fail) return { status: 503, body: 'busy', raw: true };
      return mentionsAnswer('flaky', ['m'])(req);
    });
    const c = client({ providers: { [p.url]: true } });
    expect(await c.mentions('')).toEqual([]);
    expect(c.status()[0]).toMatchObject({ ok: false, lastError: expect.stringContaining('HTTP 503') });
    fail = false;
    expect((await c.mentions('')).map((m) => m.name)).toEqual(['m']);
    expect(c.status()[0]).toEqual({ provider: p.url, name: 'flaky', ok: true });
  });

  it('sends the settings object (or {} for `true`) with every call', async () => {
    const a = await http(mentionsAnswer('a', ['x']));
    const b = await http(mentionsAnswer('b', ['y']));
    const c = client({ providers: { [a.url]: { token: 't1', n: 2 }, [b.url]: true } });
    await c.mentions('q');
    expect(a.requests).toEqual([
      { method: 'meta', params: {}, settings: { token: 't1', n: 2 } },
      { method: 'mentions', params: { query: 'q' }, settings: { token: 't1', n: 2 } },
    ]);
    expect(b.requests.map((r) => r.settings)).toEqual([{}, {}]);
  });
});

describe('mentions', () => {
  it('merges every provider in config order, then each provider’s order, each carrying its provider', async () => {
    // The first provider is the slowest: order must still follow the config.
    const slow = await http(async (req) => {
      if (req.method === 'mentions') await sleep(80);
      return mentionsAnswer('slow', ['s1', 's2'])(req);
    });
    const fast = await http(mentionsAnswer('fast', ['f1', 'f2']));
    const c = client({ providers: { [slow.url]: true, [fx('notes-provider.mjs')]: true, [fast.url]: true } });
    const got = await c.mentions('');
    expect(got.map((m) => `${m.server} ${m.name}`)).toEqual([
      'openctx:slow s1',
      'openctx:slow s2',
      'openctx:notes Alpha note',
      'openctx:notes Beta note',
      'openctx:notes Gamma note',
      'openctx:fast f1',
      'openctx:fast f2',
    ]);
    expect(got[2]).toEqual({ uri: 'notes://alpha', name: 'Alpha note', description: 'first', mimeType: 'text/markdown', server: 'openctx:notes', provider: fx('notes-provider.mjs') });
    expect(got[3]).toEqual({ uri: 'notes://beta', name: 'Beta note', mimeType: 'text/plain', server: 'openctx:notes', provider: fx('notes-provider.mjs') });
    expect(got[0]!.provider).toBe(slow.url);
  });

  it('passes the query to the provider', async () => {
    const c = client({ providers: { [fx('notes-provider.mjs')]: true } });
    expect((await c.mentions('gam')).map((m) => m.uri)).toEqual(['notes://gamma']);
  });

  it('hanging, HTTP 500, garbage, error-answering, throwing and unloadable providers never delay the others past the deadline', async () => {
    const hangHttp = await http(() => 'hang');
    const http500 = await http(() => ({ status: 500, body: 'Internal Server Error', raw: true }));
    const garbage = await http((req) => (req.method === 'meta' ? { body: { result: { name: 'garbage', mentions: {} } } } : { body: '<html>not json', raw: true }));
    const wrongShape = await http(() => ({ body: [1, 2, 3] }));
    const rpcError = await http((req) => (req.method === 'meta' ? { body: { result: { name: 'rpcerr', mentions: {} } } } : { body: { error: { code: 42, message: 'quota exceeded' } } }));
    const good = await http(mentionsAnswer('good', ['g1']));
    const providers = {
      [hangHttp.url]: true,
      [fx('hang-provider.mjs')]: true,
      [fx('hang-meta-provider.mjs')]: true,
      [http500.url]: true,
      [garbage.url]: true,
      [wrongShape.url]: true,
      [rpcError.url]: true,
      [fx('throws-on-import.mjs')]: true,
      [fx('throwing-provider.mjs')]: true,
      [good.url]: true,
      [fx('notes-provider.mjs')]: true,
    } as const;
    const c = client({ providers, timeoutMs: DEADLINE });
    const { value, ms } = await timed(c.mentions('a'));
    expect(value.map((m) => `${m.server} ${m.name}`)).toEqual(['openctx:good g1', 'openctx:notes Alpha note', 'openctx:notes Beta note', 'openctx:notes Gamma note']);
    expect(ms).toBeLessThan(DEADLINE + SLACK);

    const status = new Map(c.status().map((s) => [s.provider, s]));
    expect(status.get(hangHttp.url)).toMatchObject({ ok: false, lastError: expect.stringMatching(/timed out after 300 ms/) });
    expect(status.get(fx('hang-provider.mjs'))).toMatchObject({ ok: false, name: 'hang', lastError: expect.stringMatching(/^mentions: timed out/) });
    expect(status.get(fx('hang-meta-provider.mjs'))).toMatchObject({ ok: false, lastError: expect.stringMatching(/timed out/) });
    expect(status.get(http500.url)).toMatchObject({ ok: false, lastError: expect.stringContaining('HTTP 500') });
    expect(status.get(garbage.url)).toMatchObject({ ok: false, lastError: expect.stringContaining('not JSON') });
    expect(status.get(wrongShape.url)).toMatchObject({ ok: false, lastError: expect.stringContaining('neither "result" nor "error"') });
    expect(status.get(rpcError.url)).toMatchObject({ ok: false, lastError: 'mentions: quota exceeded' });
    expect(status.get(fx('throws-on-import.mjs'))).toMatchObject({ ok: false, lastError: expect.stringContaining('boom at import') });
    expect(status.get(fx('throwing-provider.mjs'))).toMatchObject({ ok: false, lastError: 'mentions: mentions exploded' });
    expect(status.get(good.url)).toEqual({ provider: good.url, name: 'good', ok: true });
    expect(status.get(fx('notes-provider.mjs'))).toEqual({ provider: fx('notes-provider.mjs'), name: 'notes', ok: true });
    expect(c.logs.lines.filter((l) => l.startsWith('warn openctx')).length).toBeGreaterThanOrEqual(9);
    expect(c.logs.lines.some((l) => l.includes('boom at import'))).toBe(true);

    // A second round: still bounded (cached meta, a hanging provider costs one deadline, not two).
    const again = await timed(c.mentions('b'));
    expect(again.value.map((m) => m.name)).toEqual(['g1', 'Beta note']);
    expect(again.ms).toBeLessThan(DEADLINE + SLACK);
  });

  it('mentionsStreaming hands over fast providers’ batches without waiting for a slow one', async () => {
    const fast = await http(mentionsAnswer('fast', ['f1']));
    const c = client({ providers: { [fx('hang-provider.mjs')]: true, [fast.url]: true, [fx('notes-provider.mjs')]: true }, timeoutMs: 1000 });
    const seen: Array<{ batch: MentionBatch; at: number }> = [];
    const t0 = performance.now();
    const all = c.mentionsStreaming('', (batch) => seen.push({ batch, at: performance.now() - t0 }));
    // The caller races its own, shorter deadline: fast results are already there.
    await Promise.race([all, sleep(250)]);
    expect(seen.map((s) => s.batch.name).sort()).toEqual(['fast', 'notes']);
    expect(seen.every((s) => s.at < 250)).toBe(true);
    expect(seen.find((s) => s.batch.name === 'fast')!.batch).toMatchObject({ index: 1, provider: fast.url, mentions: [{ name: 'f1', server: 'openctx:fast' }] });
    const batches = await all;
    expect(batches.map((b) => b.index)).toEqual([1, 2]);
    expect(performance.now() - t0).toBeLessThan(1000 + SLACK);
  });

  it('the caller’s signal cuts every provider short and is not held against the providers', async () => {
    const c = client({ providers: { [fx('hang-provider.mjs')]: true }, timeoutMs: 5000 });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const { value, ms } = await timed(c.mentions('', ac.signal));
    expect(value).toEqual([]);
    expect(ms).toBeLessThan(50 + SLACK);
    expect(c.status()[0]).toMatchObject({ ok: true });
  });

  it('drops invalid mentions one by one, keeping the valid ones', async () => {
    const c = client({ providers: { [fx('bad-mentions-provider.mjs')]: true } });
    expect((await c.mentions('')).map((m) => m.uri)).toEqual(['sloppy://ok', 'sloppy://ok2']);
    expect(c.logs.lines.filter((l) => l.includes('dropped invalid mentions['))).toHaveLength(2);
  });

  it('skips providers without the mentions capability, and old-style providers not implementing it', async () => {
    const annotOnly = await http((req) => (req.method === 'meta' ? { body: { result: { name: 'annot', annotations: {} } } } : { body: { result: [{ title: 'x', uri: 'x://x' }] } }));
    const oldHttp = await http((req) => (req.method === 'meta' ? { body: { result: {} } } : { body: { error: { code: -32601, message: 'method not found' } } }));
    const c = client({ providers: { [annotOnly.url]: true, [fx('old-style-provider.mjs')]: true, [oldHttp.url]: true } });
    expect(await c.mentions('')).toEqual([]);
    expect(await c.mentions('')).toEqual([]);
    expect(annotOnly.requests.map((r) => r.method)).toEqual(['meta']);
    // Old-style HTTP: tried once, "method not found" remembered, not a failure.
    expect(oldHttp.requests.map((r) => r.method)).toEqual(['meta', 'mentions']);
    expect(c.status().every((s) => s.ok)).toBe(true);
  });

  it('resolves relative module paths and file: URLs against the first root', async () => {
    const c = client({ providers: { './notes-provider.mjs': true, [pathToFileURL(fx('bad-mentions-provider.mjs')).href]: true } }, [fixtures, '/elsewhere']);
    expect((await c.mentions('')).map((m) => m.server)).toEqual(['openctx:notes', 'openctx:notes', 'openctx:notes', 'openctx:sloppy', 'openctx:sloppy']);
  });

  it('loads a package by name from the first root, ESM-only packages (import-only exports) included', async () => {
    // Built at test time: a fixture under node_modules/ would be git-ignored.
    const ws = mkdtempSync(join(tmpdir(), 'patchbay-openctx-ws-'));
    const pkg = join(ws, 'node_modules', 'esm-only-provider');
    mkdirSync(join(pkg, 'lib'), { recursive: true });
    writeFileSync(join(ws, 'package.json'), '{"name":"ws","private":true}');
    writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'esm-only-provider', type: 'module', exports: { '.': { import: './lib/provider.js' } } }));
    writeFileSync(join(pkg, 'lib', 'provider.js'), "export default { meta: () => ({ name: 'esm-only', mentions: {} }), mentions: () => [{ title: 'one', uri: 'esm://one' }] };");
    const c = client({ providers: { 'esm-only-provider': true } }, [ws]);
    expect(await c.mentions('')).toEqual([{ uri: 'esm://one', name: 'one', mimeType: 'text/plain', server: 'openctx:esm-only', provider: 'esm-only-provider' }]);
  });

  it('an unresolvable package is a failed provider, not a crash', async () => {
    const c = client({ providers: { 'no-such-openctx-provider-pkg': true, [fx('notes-provider.mjs')]: true } });
    expect(await c.mentions('alpha')).toHaveLength(1);
    expect(c.status()[0]).toMatchObject({ ok: false, lastError: expect.stringContaining('cannot resolve package "no-such-openctx-provider-pkg"') });
  });
});

describe('items', () => {
  it('itemsForMention passes the mention exactly as the provider returned it and renders ai.content', async () => {
    const c = client({ providers: { [fx('notes-provider.mjs')]: true } });
    const [alpha] = await c.mentions('alpha');
    // The client's mention has no `data`; the provider's answer shows it got its own back (data.id).
    const text = await c.itemsForMention({ uri: alpha!.uri, server: alpha!.server });
    expect(text).toBe('<openctx provider="notes" title="Alpha note" url="https://notes.example/1">\ncontent of Alpha note (id 1)\n</openctx>');
  });

  it('over HTTP, the original mention object reaches items()', async () => {
    const original = { title: 'Issue "7" <x>', uri: 'tracker://7', description: 'd', data: { secret: 'kept', nested: { a: [1] } } };
    const p = await http((req) => {
      if (req.method === 'meta') return { body: { result: { name: 'tracker', mentions: {} } } };
      if (req.method === 'mentions') return { body: { result: [original] } };
      return { body: { result: [{ title: 'Issue "7" <x>', url: 'https://t/7', ui: { hover: { text: 'hover text', markdown: '**hover md**' } } }, { title: 'Bare' }] } };
    });
    const c = client({ providers: { [p.url]: true } });
    const [m] = await c.mentions('');
    const text = await c.itemsForMention({ uri: m!.uri, server: m!.server });
    expect(p.requests.at(-1)).toEqual({ method: 'items', params: { mention: original }, settings: {} });
    // No ai.content: title + url + hover (markdown preferred); attributes escaped.
    expect(text).toBe(
      '<openctx provider="tracker" title="Issue &quot;7&quot; &lt;x>" url="https://t/7">\nIssue "7" <x>\nhttps://t/7\n**hover md**\n</openctx>\n\n' +
        '<openctx provider="tracker" title="Bare">\nBare\n</openctx>',
    );
  });

  it('falls back to hover text when there is no markdown; a mention never listed still reaches its provider by server name', async () => {
    const p = await http((req) => {
      if (req.method === 'meta') return { body: { result: { name: 'wiki', mentions: {} } } };
      return { body: { result: [{ title: 'Page', ui: { hover: { text: 'plain hover' } } }] } };
    });
    const c = client({ providers: { [p.url]: true } });
    const text = await c.itemsForMention({ uri: 'wiki://page', server: 'openctx:wiki' });
    expect(text).toBe('<openctx provider="wiki" title="Page">\nPage\nplain hover\n</openctx>');
    expect(p.requests.at(-1)!.params).toEqual({ mention: { title: 'wiki://page', uri: 'wiki://page' } });
  });

  it('itemsForMention throws a clear error for an unknown server or a failing provider, within the deadline', async () => {
    const c = client({ providers: { [fx('throwing-provider.mjs')]: true, [fx('hang-provider.mjs')]: true }, timeoutMs: DEADLINE });
    await expect(c.itemsForMention({ uri: 'x://y', server: 'openctx:nobody' })).rejects.toThrow(/no OpenCtx provider answers to openctx:nobody/);
    await expect(c.itemsForMention({ uri: 'x://y', server: 'openctx:throwing' })).rejects.toThrow(/items exploded/);
    const t0 = performance.now();
    await expect(c.itemsForMention({ uri: 'x://y', server: 'openctx:hang' })).rejects.toThrow(/timed out after 300 ms/);
    expect(performance.now() - t0).toBeLessThan(DEADLINE + SLACK);
  });

  it('itemsForMessage asks only autoInclude providers (by URI or by name) and renders them in config order', async () => {
    const byUri = await http(mentionsAnswer('byuri', []));
    const notIncluded = await http(mentionsAnswer('other', []));
    const c = client({
      providers: { [byUri.url]: true, [notIncluded.url]: true, [fx('notes-provider.mjs')]: true, [fx('hang-provider.mjs')]: true, [fx('throwing-provider.mjs')]: true },
      autoInclude: ['notes', byUri.url, 'hang', 'throwing'],
      timeoutMs: DEADLINE,
    });
    const { value, ms } = await timed(c.itemsForMessage('fix the bug'));
    expect(value).toBe(
      '<openctx provider="byuri" title="byuri item">\nbyuri says hi\n</openctx>\n\n' + '<openctx provider="notes" title="About your message">\nAbout your message\nyou said: fix the bug\n</openctx>',
    );
    expect(ms).toBeLessThan(DEADLINE + SLACK);
    expect(byUri.requests.at(-1)).toEqual({ method: 'items', params: { message: 'fix the bug' }, settings: {} });
    expect(notIncluded.requests.some((r) => r.method === 'items')).toBe(false);
  });

  it('itemsForMessage is "" without autoInclude, and honours items.messageSelectors', async () => {
    const selective = await http((req) =>
      req.method === 'meta'
        ? { body: { result: { name: 'sel', items: { messageSelectors: [{ pattern: 'ENG-\\d+' }] } } } }
        : { body: { result: [{ title: 'ENG issue', ai: { content: 'issue body' } }] } },
    );
    expect(await client({ providers: { [selective.url]: true } }).itemsForMessage('ENG-1')).toBe('');
    const c = client({ providers: { [selective.url]: true }, autoInclude: ['sel'] });
    expect(await c.itemsForMessage('no ticket here')).toBe('');
    expect(await c.itemsForMessage('see ENG-12')).toBe('<openctx provider="sel" title="ENG issue">\nissue body\n</openctx>');
    expect(selective.requests.filter((r) => r.method === 'items')).toHaveLength(1);
  });
});

describe('annotations', () => {
  const tsWithTodo = pathToFileURL('/ws/src/a.ts').href;
  const content = 'const a = 1;\n// TODO: rename\nexport {};';

  it('asks only providers whose selectors match the path and content', async () => {
    const c = client({ providers: { [fx('notes-provider.mjs')]: true, [fx('old-style-provider.mjs')]: true }, timeoutMs: DEADLINE });
    const list = await c.annotations(tsWithTodo, content);
    expect(list).toEqual([
      {
        provider: 'notes',
        providerUri: fx('notes-provider.mjs'),
        uri: tsWithTodo,
        range: { start: { line: 1, character: 0 }, end: { line: 1, character: 4 } },
        item: { title: 'A TODO', ui: { hover: { markdown: '**fix me**' } } },
      },
      { provider: 'notes', providerUri: fx('notes-provider.mjs'), uri: tsWithTodo, range: { start: { line: 0, character: 0 }, end: { line: 2, character: 10 } }, item: { title: 'Whole file note' } },
    ]);
    // .ts without TODO: notes does not match; old-style selector is **/*.md.
    expect(await c.annotations(tsWithTodo, 'clean code')).toEqual([]);
    // .md: only the old-style provider (its `selector` array) matches.
    const md = await c.annotations(pathToFileURL('/ws/README.md').href, '# TODO');
    expect(md.map((a) => a.provider)).toEqual(['old-style-provider']);
  });

  it('undefined selectors mean every file, an empty list none; failing providers are skipped within the deadline', async () => {
    const everything = await http((req) =>
      req.method === 'meta' ? { body: { result: { name: 'all', annotations: {} } } } : { body: { result: [{ uri: (req.params as { uri: string }).uri, item: { title: 'everywhere' } }] } },
    );
    const never = await http((req) => (req.method === 'meta' ? { body: { result: { name: 'never', annotations: { selectors: [] } } } } : { body: { result: [] } }));
    const c = client({ providers: { [fx('hang-provider.mjs')]: true, [fx('throwing-provider.mjs')]: true, [never.url]: true, [everything.url]: true }, timeoutMs: DEADLINE });
    const { value, ms } = await timed(c.annotations(pathToFileURL('/x/y.go').href, 'package y'));
    expect(value.map((a) => `${a.provider}: ${a.item.title}`)).toEqual(['all: everywhere']);
    expect(ms).toBeLessThan(DEADLINE + SLACK);
    expect(never.requests.map((r) => r.method)).toEqual(['meta']);
    expect(everything.requests.at(-1)).toEqual({ method: 'annotations', params: { uri: pathToFileURL('/x/y.go').href, content: 'package y' }, settings: {} });
  });

  it('renderAnnotations shows provider, 1-based lines and the item body', async () => {
    const c = client({ providers: { [fx('notes-provider.mjs')]: true } });
    const text = renderAnnotations(await c.annotations(tsWithTodo, content));
    expect(text).toBe(
      `<openctx provider="notes" uri="${tsWithTodo}" lines="2" title="A TODO">\nA TODO\n**fix me**\n</openctx>\n\n` +
        `<openctx provider="notes" uri="${tsWithTodo}" lines="1-3" title="Whole file note">\nWhole file note\n</openctx>`,
    );
    expect(renderAnnotations([])).toBe('');
  });
});
