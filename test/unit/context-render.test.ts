import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { execFileSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildRepoMap, renderContexts, type RenderOptions } from '../../src/core/context/index.js';
import type { Context as ChatContext } from '../../src/shapes/context.js';
import { gitRepo, removeWorkspace, tempWorkspace, writeFiles } from './context-helpers.js';

let ws: string;
beforeEach(() => {
  ws = tempWorkspace();
});
afterEach(() => {
  removeWorkspace(ws);
});

function opts(extra: Partial<RenderOptions> = {}): RenderOptions {
  return { roots: [ws], signal: new AbortController().signal, webMaxChars: 10_000, repoMapMaxEntries: 100, ...extra };
}
const render = (contexts: ChatContext[], extra: Partial<RenderOptions> = {}) => renderContexts(contexts, opts(extra));

describe('file contexts', () => {
  it('renders a whole file by absolute or relative path', async () => {
    writeFiles(ws, { 'src/a.ts': 'line 1\nline 2\n' });
    const abs = await render([{ type: 'file', path: join(ws, 'src/a.ts') }]);
    expect(abs).toEqual({ text: `<file path="${join(ws, 'src/a.ts')}">\nline 1\nline 2\n\n</file>`, errors: [] });
    const rel = await render([{ type: 'file', path: 'src/a.ts' }]);
    expect(rel.text).toBe(abs.text);
  });

  it('renders a 1-based inclusive linesRange, clamped to the end of the file', async () => {
    writeFiles(ws, { 'a.txt': 'one\ntwo\nthree\nfour\nfive\n' });
    const r = await render([{ type: 'file', path: 'a.txt', linesRange: { start: 2, end: 4 } }]);
    expect(r.text).toBe(`<file path="${join(ws, 'a.txt')}" lines="2-4">\ntwo\nthree\nfour\n</file>`);
    const clamped = await render([{ type: 'file', path: 'a.txt', linesRange: { start: 4, end: 99 } }]);
    expect(clamped.text).toBe(`<file path="${join(ws, 'a.txt')}" lines="4-5">\nfour\nfive\n</file>`);
    const past = await render([{ type: 'file', path: 'a.txt', linesRange: { start: 9, end: 12 } }]);
    expect(past.errors).toEqual([`file ${join(ws, 'a.txt')}: line range 9-12 is past the end (5 lines)`]);
  });

  it('turns a missing or binary file into an error entry, never a throw, and keeps the others', async () => {
    writeFiles(ws, { 'ok.txt': 'fine', 'img.bin': Buffer.from([0x89, 0x50, 0x00, 0x01, 0x02]) });
    const r = await render([
      { type: 'file', path: 'missing.ts' },
      { type: 'file', path: 'ok.txt' },
      { type: 'file', path: 'img.bin' },
    ]);
    expect(r.errors).toEqual([`file ${join(ws, 'missing.ts')}: not found: ${join(ws, 'missing.ts')}`, `file ${join(ws, 'img.bin')}: binary file: ${join(ws, 'img.bin')}`]);
    const blocks = r.text.split('\n');
    expect(blocks[0]).toBe(`<file path="${join(ws, 'missing.ts')}" error="not found: ${join(ws, 'missing.ts')}"/>`);
    expect(r.text).toContain(`<file path="${join(ws, 'ok.txt')}">\nfine\n</file>`);
  });

  it('refuses a FIFO (no writer: a blocking open would hang) and a device, as not regular files, and keeps the others', async () => {
    writeFiles(ws, { 'ok.txt': 'fine' });
    execFileSync('mkfifo', [join(ws, 'pipe.txt')]);
    symlinkSync('/dev/zero', join(ws, 'zero.txt'));
    const r = await render([
      { type: 'file', path: 'pipe.txt' },
      { type: 'file', path: 'zero.txt' },
      { type: 'file', path: 'ok.txt' },
    ]);
    expect(r.errors).toEqual([`file ${join(ws, 'pipe.txt')}: not a regular file: ${join(ws, 'pipe.txt')}`, `file ${join(ws, 'zero.txt')}: not a regular file: ${join(ws, 'zero.txt')}`]);
    expect(r.text).toContain('fine');
  });

  it('truncates a file larger than fileMaxBytes with a notice', async () => {
    writeFiles(ws, { 'big.txt': 'x'.repeat(5000) });
    const r = await render([{ type: 'file', path: 'big.txt' }], { fileMaxBytes: 100 });
    expect(r.text).toBe(`<file path="${join(ws, 'big.txt')}">\n${'x'.repeat(100)}\n[truncated: showing the first 100 bytes]\n</file>`);
  });
});

describe('directory contexts', () => {
  it('lists a folder as a tree, gitignore-aware, in a git repository', async () => {
    writeFiles(ws, { '.gitignore': '*.log\n', 'src/a.ts': '', 'src/lib/b.ts': '', 'src/debug.log': '', 'other.ts': '' });
    gitRepo(ws);
    const r = await render([{ type: 'directory', path: 'src' }]);
    expect(r).toEqual({
      text: `<directory path="${join(ws, 'src')}">\n${join(ws, 'src')}/\n  lib/\n    b.ts\n  a.ts\n</directory>`,
      errors: [],
    });
  });

  it('outside git, applies the .gitignore files above the folder too', async () => {
    writeFiles(ws, { '.gitignore': 'secret.txt\n', 'src/secret.txt': '', 'src/open.txt': '', 'src/.gitignore': '*.tmp\n', 'src/x.tmp': '' });
    const r = await render([{ type: 'directory', path: join(ws, 'src') }]);
    expect(r.text).toBe(`<directory path="${join(ws, 'src')}">\n${join(ws, 'src')}/\n  .gitignore\n  open.txt\n</directory>`);
  });

  it('caps a large listing with a notice and reports a missing folder', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 30; i++) files[`d/f${String(i).padStart(2, '0')}.txt`] = '';
    writeFiles(ws, files);
    const r = await render(
      [
        { type: 'directory', path: 'd' },
        { type: 'directory', path: 'nope' },
      ],
      { directoryMaxEntries: 5 },
    );
    expect(r.text).toContain('/ (25 more)\n  f00.txt\n');
    expect(r.text).toContain('[25 of 30 entries left out]');
    expect(r.errors).toEqual([`directory ${join(ws, 'nope')}: not found: ${join(ws, 'nope')}`]);
  });
});

describe('repoMap', () => {
  it('renders the workspace tree from git ls-files, breadth first when capped, with a left-out notice', async () => {
    const files: Record<string, string> = { '.gitignore': 'dist/\n', 'README.md': '', 'dist/bundle.js': '' };
    for (let i = 0; i < 20; i++) files[`src/mod${String(i).padStart(2, '0')}.ts`] = '';
    files['src/deep/deeper/leaf.ts'] = '';
    writeFiles(ws, files);
    gitRepo(ws);
    const full = await buildRepoMap([ws], { maxEntries: 1000 });
    expect(full).not.toContain('dist');
    expect(full).toContain('\n    deep/\n      deeper/\n        leaf.ts\n    mod00.ts');
    const r = await render([{ type: 'repoMap' }], { repoMapMaxEntries: 6 });
    expect(r.errors).toEqual([]);
    // 26 entries: 3 at the top (.gitignore, README.md, src/), 21 in src/, deeper/ and leaf.ts below.
    const lines = r.text.split('\n');
    expect(lines[0]).toMatch(/^<repoMap description=".+">$/);
    expect(lines[1]).toBe(`${ws}/`);
    expect(lines).toContain('  src/ (18 more)');
    expect(lines).toContain('    deep/ (1 more)');
    expect(lines).toContain('    mod01.ts');
    expect(lines).not.toContain('    mod02.ts');
    expect(lines).toContain('  README.md');
    expect(lines.some((l) => l.includes('leaf.ts'))).toBe(false);
    expect(lines[lines.length - 2]).toBe('[20 of 26 entries left out]');
    expect(lines[lines.length - 1]).toBe('</repoMap>');
  });

  it('walks outside git, per root', async () => {
    const ws2 = tempWorkspace();
    try {
      writeFiles(ws, { 'a.txt': '', 'ignored.log': '', '.gitignore': '*.log\n' });
      writeFiles(ws2, { 'b/c.txt': '' });
      const map = await buildRepoMap([ws, ws2], { maxEntries: 100 });
      expect(map).toBe(`${ws}/\n  .gitignore\n  a.txt\n${ws2}/\n  b/\n    c.txt`);
    } finally {
      removeWorkspace(ws2);
    }
  });
});

describe('cursor and MCP resource contexts', () => {
  it('renders a cursor point, and a selection with its text (positions are 1-based, as ECA editors send them)', async () => {
    writeFiles(ws, { 'a.ts': 'const a = 1;\nconst bb = 2;\nconst c = 3;\n' });
    const point = await render([{ type: 'cursor', path: 'a.ts', position: { start: { line: 2, character: 7 }, end: { line: 2, character: 7 } } }]);
    expect(point.text).toBe(`<cursor description="Editor cursor; line and character are 1-based" path="${join(ws, 'a.ts')}" line="2" character="7"/>`);
    const sel = await render([{ type: 'cursor', path: 'a.ts', position: { start: { line: 1, character: 7 }, end: { line: 2, character: 9 } } }]);
    expect(sel.text).toMatch(/ line="1" character="7" endLine="2" endCharacter="9">\na = 1;\nconst bb\n<\/cursor>$/);
  });

  it('renders a text context with its label', async () => {
    const r = await render([{ type: 'text', label: 'scratch buffer', content: 'some notes' }]);
    expect(r.text).toBe('<text label="scratch buffer">\nsome notes\n</text>');
  });

  it('resolves an MCP resource through the callback, and reports one that cannot be resolved', async () => {
    const ctx = { type: 'resource', uri: 'docs://a', name: 'a', description: '', mimeType: 'text/plain', server: 'docs' } as const;
    const ok = await render([ctx], { readResource: async (c) => `contents of ${c.uri}` });
    expect(ok.text).toBe('<resource uri="docs://a" name="a" server="docs" mimeType="text/plain">\ncontents of docs://a\n</resource>');
    const none = await render([ctx]);
    expect(none.errors).toEqual(['resource docs://a: resources are not available here']);
    const failing = await render([ctx], { readResource: async () => Promise.reject(new Error('server gone')) });
    expect(failing.text).toBe('<resource uri="docs://a" server="docs" error="server gone"/>');
  });
});

describe('web contexts', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      switch (req.url) {
        case '/page':
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
          res.end(
            '<html><head><title>T</title><style>body{color:red}</style><script>var secret = 1;</script></head>' + '<body><h1>Hello</h1><p>World <b>bold</b> <a href="/x">link</a></p></body></html>',
          );
          return;
        case '/big':
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end(`<p>${'word '.repeat(5000)}</p>`);
          return;
        case '/plain':
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end('just <text>');
          return;
        case '/redirect':
          res.writeHead(302, { location: '/plain' });
          res.end();
          return;
        case '/binary':
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          res.end(Buffer.from([0, 1, 2, 3]));
          return;
        case '/hang':
          return; // never answers
        default:
          res.writeHead(404, { 'content-type': 'text/plain' });
          res.end('nope');
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('fetches HTML and strips it to text (no tags, scripts or styles)', async () => {
    const r = await render([{ type: 'web', url: `${base}/page` }]);
    expect(r.errors).toEqual([]);
    expect(r.text).toMatch(new RegExp(`^<web url="${base}/page">\\n`));
    expect(r.text).toContain('HELLO');
    expect(r.text).toContain('World bold link');
    expect(r.text).not.toMatch(/<(p|b|h1|script|style)>|secret|color:red/);
  });

  it('caps the text at webMaxChars with a notice', async () => {
    const r = await render([{ type: 'web', url: `${base}/big` }], { webMaxChars: 100 });
    const body = r.text.split('\n')[1];
    expect(body).toHaveLength(100);
    expect(r.text).toContain('[truncated: showing the first 100 of 24999 characters]');
  });

  it('passes plain text through and follows redirects', async () => {
    const r = await render([{ type: 'web', url: `${base}/redirect` }]);
    expect(r).toEqual({ text: `<web url="${base}/redirect">\njust <text>\n</web>`, errors: [] });
  });

  it('turns a 404, binary content, a bad scheme and a timeout into error entries', async () => {
    const r = await render(
      [
        { type: 'web', url: `${base}/missing` },
        { type: 'web', url: `${base}/binary` },
        { type: 'web', url: 'file:///etc/passwd' },
        { type: 'web', url: `${base}/hang` },
      ],
      { webTimeoutMs: 300 },
    );
    expect(r.errors).toEqual([
      `web ${base}/missing: HTTP 404 Not Found`,
      `web ${base}/binary: not a text page (application/octet-stream)`,
      'web file:///etc/passwd: unsupported URL scheme file:',
      `web ${base}/hang: timed out after 300 ms`,
    ]);
    expect(r.text.split('\n')[0]).toBe(`<web url="${base}/missing" error="HTTP 404 Not Found"/>`);
  });

  it('stops when the signal is aborted', async () => {
    const ac = new AbortController();
    const pending = render([{ type: 'web', url: `${base}/hang` }], { signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    const r = await pending;
    expect(r.errors).toEqual([`web ${base}/hang: cancelled`]);
  });
});
