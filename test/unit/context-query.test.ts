import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileIndex, queryContexts } from '../../src/core/context/index.js';
import { offeredContextSchema } from '../../src/protocol/eca/context.js';
import type { ResourceContext } from '../../src/shapes/context.js';
import { toEcaOffer } from '../../src/server/eca/eca-contexts.js';
import { gitRepo, removeWorkspace, tempWorkspace, writeFiles } from './context-helpers.js';

let ws: string;
let ws2: string;
let indexes: FileIndex[];

beforeEach(() => {
  ws = tempWorkspace();
  ws2 = tempWorkspace('patchbay-ctx-second-');
  writeFiles(ws, { '.gitignore': 'dist/\n', 'src/chat.ts': '', 'src/xchat.ts': '', 'chatter/xyz.ts': '', 'dist/chat.js': '' });
  gitRepo(ws);
  writeFiles(ws2, { 'notes/chat-log.md': '', 'other.txt': '' });
  indexes = [new FileIndex(ws, { watch: false }), new FileIndex(ws2, { watch: false })];
});
afterEach(() => {
  for (const ix of indexes) ix.dispose();
  removeWorkspace(ws);
  removeWorkspace(ws2);
});

const resource: ResourceContext = {
  type: 'resource',
  uri: 'docs://guide',
  name: 'guide',
  description: 'The guide',
  mimeType: 'text/markdown',
  server: 'docs',
};

describe('queryContexts', () => {
  it('a blank query offers repoMap, a bare cursor, the roots, files and directories, and MCP resources', () => {
    const r = queryContexts(indexes, '', { resources: [resource] });
    expect(r.slice(0, 4)).toEqual([{ type: 'repoMap' }, { type: 'cursor' }, { type: 'directory', path: ws }, { type: 'directory', path: ws2 }]);
    expect(r).toContainEqual({ type: 'file', path: join(ws, 'src/chat.ts') });
    expect(r).toContainEqual({ type: 'directory', path: join(ws2, 'notes') });
    expect(r[r.length - 1]).toEqual(resource);
    expect(r).not.toContainEqual({ type: 'file', path: join(ws, 'dist/chat.js') }); // ignored
    // What the ECA façade sends of them is valid ECA.
    for (const c of r) expect(offeredContextSchema.safeParse(toEcaOffer(c)).success).toBe(true);
  });

  it('filters by the query: basename matches first, directories offered, across all roots', () => {
    const r = queryContexts(indexes, 'chat');
    expect(r.map((c) => c.type)).not.toContain('repoMap');
    const paths = r.flatMap((c) => ('path' in c ? [c.path] : []));
    expect(paths[0]).toBe(join(ws, 'src/chat.ts'));
    expect(paths).toContain(join(ws, 'chatter'));
    expect(paths).toContain(join(ws2, 'notes/chat-log.md'));
    expect(paths.indexOf(join(ws, 'src/chat.ts'))).toBeLessThan(paths.indexOf(join(ws, 'src/xchat.ts')));
    expect(paths).not.toContain(join(ws, 'dist/chat.js'));
  });

  it('offers repoMap and cursor when the query names them', () => {
    expect(queryContexts(indexes, 'repoMap')).toContainEqual({ type: 'repoMap' });
    expect(queryContexts(indexes, 'curs')[0]).toEqual({ type: 'cursor' });
    expect(queryContexts(indexes, 'curs')).not.toContainEqual({ type: 'repoMap' });
  });

  it('lists a folder named as a path, folders first, and filters by a partial last segment', () => {
    writeFiles(ws, { 'src/sub/deep.ts': '' });
    expect(queryContexts(indexes, './src/')).toEqual([
      { type: 'directory', path: join(ws, 'src/sub') },
      { type: 'file', path: join(ws, 'src/chat.ts') },
      { type: 'file', path: join(ws, 'src/xchat.ts') },
    ]);
    const partial = queryContexts(indexes, './src/xc');
    expect(partial).toContainEqual({ type: 'file', path: join(ws, 'src/xchat.ts') });
    expect(partial).not.toContainEqual({ type: 'file', path: join(ws, 'src/chat.ts') });
    expect(queryContexts(indexes, `${ws2}/`)).toContainEqual({ type: 'file', path: join(ws2, 'other.txt') });
  });

  it('filters MCP resources by the query and leaves out contexts the chat already has', () => {
    expect(queryContexts(indexes, 'guide', { resources: [resource] })).toContainEqual(resource);
    expect(queryContexts(indexes, 'zzz', { resources: [resource] })).not.toContainEqual(resource);
    const r = queryContexts(indexes, 'chat', { exclude: [{ type: 'file', path: join(ws, 'src/chat.ts') }] });
    expect(r).not.toContainEqual({ type: 'file', path: join(ws, 'src/chat.ts') });
    expect(r).toContainEqual({ type: 'file', path: join(ws, 'src/xchat.ts') });
  });

  it('honours the limit on file and directory results', () => {
    const r = queryContexts(indexes, 't', { limit: 2 });
    expect(r.filter((c) => (c.type === 'file' || c.type === 'directory') && c.path !== ws && c.path !== ws2)).toHaveLength(2);
  });
});
