// The file tools through the editor's buffers (issue 19, ACP `fs/read_text_file` and
// `fs/write_text_file`): the real native tools with a real ToolContext on a real temp workspace,
// whose editor bridge serves an in-memory buffer map that differs from disk, as an editor with
// unsaved changes does. The behaviour followed is ACP v1's client file system methods
// (agentclientprotocol.com "File System": read returns the buffer's content, unsaved changes
// included; write creates or replaces the file through the editor) and the ACP SDK's
// `RequestError.resourceNotFound` (-32002) for a file the client cannot find.
import { mkdir, readFile, rename, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editFileTool, readFileTool, writeFileTool } from '../../src/core/tools/native/index.js';
import { contentHash } from '../../src/core/tools/checkpoint.js';
import { protectedPath } from '../../src/core/tool-calls/protected-paths.js';
import { OutsideWorkspaceError, resolveContained } from '../../src/util/contained.js';
import type { EditorBridge, EditorFileRead, EditorFileWrite, FileCheckpoint, ToolContext } from '../../src/shapes/tool.js';
import { context, removeDir, tempDir, text } from './tools-helpers.js';

/**
 * An editor: open buffers (path → text) over the disk. A read serves the buffer, else the file
 * on disk, else answers "not found" as an ACP client does (-32002); a write lands in the buffer
 * (the editor saves when it likes: here never, so disk shows what went around the editor).
 */
class BufferEditor {
  buffers = new Map<string, string>();
  reads: EditorFileRead[] = [];
  writes: EditorFileWrite[] = [];
  failRead?: unknown;
  failWrite?: unknown;
  /** Runs inside a read, before it answers (to change the disk under it). */
  duringRead?: () => Promise<void>;

  bridge(opts: { read?: boolean; write?: boolean } = {}): EditorBridge {
    return {
      ...(opts.read !== false ? { readTextFile: (req: EditorFileRead) => this.read(req) } : {}),
      ...(opts.write !== false ? { writeTextFile: (req: EditorFileWrite) => this.write(req) } : {}),
    };
  }

  private async read(req: EditorFileRead): Promise<string> {
    this.reads.push(req);
    await this.duringRead?.();
    if (this.failRead !== undefined) throw this.failRead;
    const open = this.buffers.get(req.path);
    if (open !== undefined) return open;
    try {
      return await readFile(req.path, 'utf8');
    } catch {
      throw Object.assign(new Error(`Resource not found: ${req.path}`), { code: -32002 });
    }
  }

  private async write(req: EditorFileWrite): Promise<void> {
    this.writes.push(req);
    if (this.failWrite !== undefined) throw this.failWrite;
    this.buffers.set(req.path, req.content);
  }

  get asked(): number {
    return this.reads.length + this.writes.length;
  }
}

let ws: string;
let outside: string;
let editor: BufferEditor;
let changes: FileCheckpoint[];
beforeEach(async () => {
  ws = await tempDir('pb-editor-ws-');
  outside = await tempDir('pb-editor-out-');
  editor = new BufferEditor();
  changes = [];
});
afterEach(async () => {
  await removeDir(ws);
  await removeDir(outside);
});

/** A call's context as tool-call.ts makes it: its id, the protected-path guard, checkpoints recorded. */
function ctx(opts: { bridge?: EditorBridge; signal?: AbortSignal; guard?: boolean } = {}): ToolContext {
  return {
    ...context([ws], { editor: opts.bridge ?? editor.bridge(), signal: opts.signal }),
    toolCallId: 'call-1',
    guardProtected: opts.guard === false ? undefined : (real) => protectedPath(real, [ws]),
    recordChange: (c) => changes.push(c),
  };
}

const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  );

describe('read_file through the editor', () => {
  const tool = readFileTool();

  it("returns the buffer's text, unsaved changes included, asking with the call's chat, id and signal", async () => {
    const file = join(ws, 'a.txt');
    await writeFile(file, 'on disk\n');
    editor.buffers.set(file, 'unsaved 1\nunsaved 2\n');
    const c = ctx();
    const r = await tool.call({ path: 'a.txt' }, c);
    expect(r.error).toBe(false);
    expect(text(r)).toBe('unsaved 1\nunsaved 2\n');
    expect(editor.reads).toEqual([{ path: file, chatId: 'test-chat', toolCallId: 'call-1', signal: c.signal }]);
  });

  it('windows the buffer exactly as a disk read of the same text (line_offset, limit, notices, CRLF)', async () => {
    const body = Array.from({ length: 30 }, (_, i) => `line ${i + 1}\r\n`).join('') + 'last, no newline';
    await writeFile(join(ws, 'same.txt'), body);
    await writeFile(join(ws, 'a.txt'), 'short on disk\n');
    editor.buffers.set(join(ws, 'a.txt'), body);
    for (const args of [{}, { line_offset: 5, limit: 3 }, { line_offset: 28 }, { line_offset: 40 }]) {
      const viaEditor = await tool.call({ path: 'a.txt', ...args }, ctx());
      const fromDisk = await tool.call({ path: 'same.txt', ...args }, context([ws]));
      expect(text(viaEditor)).toBe(text(fromDisk).replaceAll('same.txt', 'a.txt'));
      expect(viaEditor.error).toBe(fromDisk.error);
    }
  });

  it('reads disk when the editor does not know the file (ACP resource not found)', async () => {
    await writeFile(join(ws, 'a.txt'), 'disk text\n');
    editor.failRead = Object.assign(new Error('Resource not found'), { code: -32002 });
    const r = await tool.call({ path: 'a.txt' }, ctx());
    expect(r.error).toBe(false);
    expect(text(r)).toBe('disk text\n');
    expect(editor.reads).toHaveLength(1);
  });

  it("any other failure of the editor is a tool error with the editor's message, not a disk read", async () => {
    await writeFile(join(ws, 'a.txt'), 'disk text\n');
    editor.failRead = Object.assign(new Error('fs/read_text_file timed out after 30 s'), { code: -32603 });
    const r = await tool.call({ path: 'a.txt' }, ctx());
    expect(r.error).toBe(true);
    expect(text(r)).toBe('Cannot read file: the editor said: fs/read_text_file timed out after 30 s');
    // A plain { code, message } rejection (not an Error) says the same way.
    editor.failRead = { code: -32000, message: 'buffer is\nlocked' };
    expect(text(await tool.call({ path: 'a.txt' }, ctx()))).toBe('Cannot read file: the editor said: buffer is locked');
  });

  it('a binary file, a directory and a missing file are answered from disk, without asking the editor', async () => {
    await writeFile(join(ws, 'img.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]));
    editor.buffers.set(join(ws, 'img.png'), 'not what the disk holds');
    expect(text(await tool.call({ path: 'img.png' }, ctx()))).toMatch(/is a binary file/);
    await mkdir(join(ws, 'd'));
    expect(text(await tool.call({ path: 'd' }, ctx()))).toMatch(/is a directory/);
    editor.buffers.set(join(ws, 'new.txt'), 'only in the editor');
    expect(text(await tool.call({ path: 'new.txt' }, ctx()))).toMatch(/No such file/);
    expect(editor.asked).toBe(0);
  });

  it('a path outside the workspace, or a symlink out of it, is refused without asking the editor', async () => {
    await writeFile(join(outside, 'secret.txt'), 'secret\n');
    await symlink(join(outside, 'secret.txt'), join(ws, 'link.txt'));
    await symlink(outside, join(ws, 'out'));
    for (const path of [join(outside, 'secret.txt'), 'link.txt', 'out/secret.txt']) {
      const r = await tool.call({ path }, ctx());
      expect(r.error).toBe(true);
      expect(text(r)).toMatch(/outside the workspace/);
    }
    expect(editor.asked).toBe(0);
  });

  it('a folder swapped for a symlink out while the editor read is caught: its text is not returned', async () => {
    await mkdir(join(ws, 'd'));
    await writeFile(join(ws, 'd', 'f.txt'), 'inside\n');
    await writeFile(join(outside, 'f.txt'), 'OUTSIDE SECRET\n');
    editor.duringRead = async () => {
      await rename(join(ws, 'd'), join(ws, 'd-was'));
      await symlink(outside, join(ws, 'd'));
    };
    const r = await tool.call({ path: 'd/f.txt' }, ctx());
    expect(r.error).toBe(true);
    expect(text(r)).toMatch(/was moved outside the workspace while the call ran/);
    expect(text(r)).not.toContain('SECRET');
  });
});

describe('edit_file through the editor', () => {
  const tool = editFileTool();

  it("edits the buffer's text and writes it through the editor: disk untouched, diff and checkpoint from the buffer", async () => {
    const file = join(ws, 'a.ts');
    await writeFile(file, 'const a = 1;\n');
    editor.buffers.set(file, 'const a = 1;\nconst b = 2; // unsaved\n');
    const c = ctx();
    const r = await tool.call({ path: file, original_content: 'const b = 2;', new_content: 'const b = 3;' }, c);
    expect(text(r)).toBe(`Edited ${file}: replaced 1 occurrence (+1 -1 lines).`);
    expect(r.error).toBe(false);
    const after = 'const a = 1;\nconst b = 3; // unsaved\n';
    expect(editor.writes).toEqual([{ path: file, content: after, chatId: 'test-chat', toolCallId: 'call-1', signal: c.signal }]);
    expect(editor.buffers.get(file)).toBe(after);
    expect(await readFile(file, 'utf8')).toBe('const a = 1;\n');
    expect(r.details).toMatchObject({ type: 'fileChange', path: file, linesAdded: 1, linesRemoved: 1 });
    expect(r.details?.type === 'fileChange' && r.details.diff).toContain('-const b = 2; // unsaved\n+const b = 3; // unsaved');
    expect(changes).toEqual([{ path: file, before: Buffer.from('const a = 1;\nconst b = 2; // unsaved\n'), afterHash: contentHash(Buffer.from(after)) }]);
  });

  it('matches LF original_content against a CRLF buffer and writes CRLF, as on disk', async () => {
    const file = join(ws, 'crlf.txt');
    await writeFile(file, 'x\r\n');
    editor.buffers.set(file, 'one\r\ntwo\r\nthree\r\n');
    const r = await tool.call({ path: file, original_content: 'one\ntwo', new_content: 'uno\ndos' }, ctx());
    expect(r.error).toBe(false);
    expect(editor.buffers.get(file)).toBe('uno\r\ndos\r\nthree\r\n');
  });

  it('a text found only on disk, not in the buffer, is not found', async () => {
    const file = join(ws, 'a.txt');
    await writeFile(file, 'old disk line\n');
    editor.buffers.set(file, 'the buffer moved on\n');
    const r = await tool.call({ path: file, original_content: 'old disk line', new_content: 'x' }, ctx());
    expect(r.error).toBe(true);
    expect(text(r)).toMatch(/was not found/);
    expect(editor.writes).toEqual([]);
  });

  it('the preview diffs against the buffer; a path outside is previewed from disk without asking the editor', async () => {
    const file = join(ws, 'a.txt');
    await writeFile(file, 'disk\n');
    editor.buffers.set(file, 'buffer\n');
    const p = await tool.preview!({ path: file, original_content: 'buffer', new_content: 'edited' }, ctx());
    expect(p?.diff).toContain('-buffer\n+edited');
    await writeFile(join(outside, 'o.txt'), 'outside\n');
    editor.reads = [];
    const o = await tool.preview!({ path: join(outside, 'o.txt'), original_content: 'outside', new_content: 'x' }, ctx());
    expect(o?.diff).toContain('-outside\n+x');
    expect(editor.reads).toEqual([]);
  });

  it('a failed editor write is a tool error with its message; nothing is recorded and disk is untouched', async () => {
    const file = join(ws, 'a.txt');
    await writeFile(file, 'hello\n');
    editor.failWrite = new Error('the buffer is read-only');
    const r = await tool.call({ path: file, original_content: 'hello', new_content: 'bye' }, ctx());
    expect(r.error).toBe(true);
    expect(text(r)).toBe('Cannot write file: the editor said: the buffer is read-only');
    expect(changes).toEqual([]);
    expect(await readFile(file, 'utf8')).toBe('hello\n');
  });

  it('a failed editor read is a tool error; nothing is written', async () => {
    await writeFile(join(ws, 'a.txt'), 'hello\n');
    editor.failRead = new Error('boom');
    const r = await tool.call({ path: 'a.txt', original_content: 'hello', new_content: 'bye' }, ctx());
    expect(text(r)).toBe('Cannot edit file: the editor said: boom');
    expect(editor.writes).toEqual([]);
  });

  it('a symlink out of the workspace, or to a protected path, is refused without asking the editor', async () => {
    await writeFile(join(outside, 'o.txt'), 'outside\n');
    await symlink(join(outside, 'o.txt'), join(ws, 'out.txt'));
    await mkdir(join(ws, '.git'));
    await writeFile(join(ws, '.git', 'config'), '[core]\n');
    await symlink(join(ws, '.git', 'config'), join(ws, 'innocent.txt'));
    const out = await tool.call({ path: 'out.txt', original_content: 'outside', new_content: 'x' }, ctx());
    expect(text(out)).toMatch(/outside the workspace/);
    const prot = await tool.call({ path: 'innocent.txt', original_content: '[core]', new_content: '[core]\n\thooksPath = /tmp' }, ctx());
    expect(prot.error).toBe(true);
    expect(text(prot)).toMatch(/leads to a protected path \(\.git \(git metadata/);
    expect(editor.asked).toBe(0);
    // Approved for the protected path (no guard, as tool-call.ts makes it then): the editor writes it.
    const ok = await tool.call({ path: 'innocent.txt', original_content: '[core]', new_content: '[core]\n\tx = 1' }, ctx({ guard: false }));
    expect(ok.error).toBe(false);
    // The editor is sent where the symlink led when checked (issue 28 point 16): a swap of the link afterwards cannot redirect it.
    expect(editor.writes.map((w) => w.path)).toEqual([join(ws, '.git', 'config')]);
  });

  it('a folder swapped for a symlink out while the editor read is caught before the editor is asked to write', async () => {
    await mkdir(join(ws, 'd'));
    await writeFile(join(ws, 'd', 'f.txt'), 'inside\n');
    await writeFile(join(outside, 'f.txt'), 'inside\n');
    editor.duringRead = async () => {
      await rename(join(ws, 'd'), join(ws, 'd-was'));
      await symlink(outside, join(ws, 'd'));
    };
    const r = await tool.call({ path: 'd/f.txt', original_content: 'inside', new_content: 'changed' }, ctx());
    expect(r.error).toBe(true);
    expect(text(r)).toMatch(/was moved outside the workspace while the call ran/);
    expect(editor.writes).toEqual([]);
    expect(changes).toEqual([]);
  });

  it('a stop while the editor is asked ends the call as cancelled, writing nothing', async () => {
    await writeFile(join(ws, 'a.txt'), 'hello\n');
    const ac = new AbortController();
    const bridge = {
      ...editor.bridge(),
      // An editor that answers only when the request is cancelled (as the façade's request does on abort).
      readTextFile: (req: EditorFileRead) =>
        new Promise<string>((_, reject) => {
          req.signal.addEventListener('abort', () => reject(new Error('request cancelled')));
          ac.abort();
        }),
    };
    const r = await tool.call({ path: 'a.txt', original_content: 'hello', new_content: 'bye' }, ctx({ bridge, signal: ac.signal }));
    expect(r.error).toBe(true);
    expect(text(r)).toBe('edit_file was cancelled.');
    expect(editor.writes).toEqual([]);
  });

  it('with a read-only bridge (no writeTextFile), reads the buffer and writes disk', async () => {
    const file = join(ws, 'a.txt');
    await writeFile(file, 'disk\n');
    editor.buffers.set(file, 'buffer\n');
    const r = await tool.call({ path: file, original_content: 'buffer', new_content: 'edited' }, ctx({ bridge: editor.bridge({ write: false }) }));
    expect(r.error).toBe(false);
    expect(await readFile(file, 'utf8')).toBe('edited\n');
  });
});

describe('write_file through the editor', () => {
  const tool = writeFileTool();

  it('a new file in a new folder: the folder is made (checked), the file is written by the editor only', async () => {
    const file = join(ws, 'src', 'deep', 'new.ts');
    const c = ctx();
    const r = await tool.call({ path: 'src/deep/new.ts', content: 'export {};\n' }, c);
    expect(text(r)).toBe(`Created ${file} (+1 -0 lines).`);
    expect(editor.writes).toEqual([{ path: file, content: 'export {};\n', chatId: 'test-chat', toolCallId: 'call-1', signal: c.signal }]);
    expect(editor.reads).toEqual([]);
    expect((await stat(join(ws, 'src', 'deep'))).isDirectory()).toBe(true);
    expect(await exists(file)).toBe(false);
    expect(changes).toEqual([{ path: file, before: null, afterHash: contentHash(Buffer.from('export {};\n')) }]);
  });

  it("an existing file: the diff and checkpoint are against the buffer's text", async () => {
    const file = join(ws, 'a.txt');
    await writeFile(file, 'disk\n');
    editor.buffers.set(file, 'buffer\n');
    const r = await tool.call({ path: file, content: 'new\n' }, ctx());
    expect(text(r)).toBe(`Wrote ${file} (+1 -1 lines).`);
    expect(r.details?.type === 'fileChange' && r.details.diff).toContain('-buffer\n+new');
    expect(changes[0]?.before).toEqual(Buffer.from('buffer\n'));
    expect(editor.buffers.get(file)).toBe('new\n');
    expect(await readFile(file, 'utf8')).toBe('disk\n');
    const p = await tool.preview!({ path: file, content: 'x\n' }, ctx());
    expect(p?.diff).toContain('-new\n+x');
  });

  it('a new path outside, through a symlinked folder, or at a dangling symlink out, is refused without the editor and makes nothing', async () => {
    await symlink(outside, join(ws, 'out'));
    await symlink(join(outside, 'planted.txt'), join(ws, 'dangling.txt'));
    for (const path of [join(outside, 'x.txt'), 'out/x.txt', 'out/newdir/x.txt', 'dangling.txt']) {
      const r = await tool.call({ path, content: 'x' }, ctx());
      expect(r.error).toBe(true);
      expect(text(r)).toMatch(/outside the workspace/);
    }
    expect(editor.asked).toBe(0);
    expect(await exists(join(outside, 'newdir'))).toBe(false);
    expect(await exists(join(outside, 'planted.txt'))).toBe(false);
  });

  it('a protected path reached through a symlink is refused without the editor; a directory is refused', async () => {
    await mkdir(join(ws, '.vscode'));
    await symlink(join(ws, '.vscode'), join(ws, 'settings'));
    const r = await tool.call({ path: 'settings/tasks.json', content: '{}' }, ctx());
    expect(r.error).toBe(true);
    expect(text(r)).toMatch(/leads to a protected path \(\.vscode \(VS Code/);
    await mkdir(join(ws, 'd'));
    expect(text(await tool.call({ path: 'd', content: 'x' }, ctx()))).toMatch(/is a directory/);
    expect(editor.asked).toBe(0);
  });

  it('a failed editor write is a tool error with its message, nothing recorded', async () => {
    editor.failWrite = Object.assign(new Error('Permission denied by the user'), { code: -32603 });
    const r = await tool.call({ path: 'n.txt', content: 'x' }, ctx());
    expect(r.error).toBe(true);
    expect(text(r)).toBe('Cannot write file: the editor said: Permission denied by the user');
    expect(changes).toEqual([]);
    expect(await exists(join(ws, 'n.txt'))).toBe(false);
  });

  it('without an editor bridge, writes disk as before', async () => {
    const r = await tool.call({ path: 'plain.txt', content: 'disk\n' }, ctx({ bridge: {} }));
    expect(r.error).toBe(false);
    expect(await readFile(join(ws, 'plain.txt'), 'utf8')).toBe('disk\n');
  });
});

// The check made before a path is handed to the editor (util/contained.ts), by both methods: through
// /proc/self/fd on Linux, and the portable one.
describe.each(['fd', 'path'] as const)('resolveContained (via %s)', (via) => {
  it('finds where a path really leads, following symlinks (a dangling one too) and judging a missing file by its folder', async () => {
    await mkdir(join(ws, 'd'));
    await writeFile(join(ws, 'd', 'f.txt'), 'x');
    await symlink(join(ws, 'd'), join(ws, 'dl'));
    await symlink('f.txt', join(ws, 'd', 'rel'));
    await symlink(join(ws, 'd', 'later.txt'), join(ws, 'dangling'));
    const opts = { roots: [ws], via };
    expect(await resolveContained(join(ws, 'dl', 'rel'), opts)).toEqual({ real: join(ws, 'd', 'f.txt'), kind: 'file' });
    expect(await resolveContained(join(ws, 'dangling'), opts)).toEqual({ real: join(ws, 'd', 'later.txt'), kind: 'missing' });
    expect(await resolveContained(join(ws, 'dl'), opts)).toEqual({ real: join(ws, 'd'), kind: 'directory' });
    await expect(resolveContained(join(ws, 'no', 'such', 'x'), opts)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await resolveContained(join(ws, 'no', 'such', 'x'), { ...opts, mkdirs: true })).toEqual({ real: join(ws, 'no', 'such', 'x'), kind: 'missing' });
    expect((await stat(join(ws, 'no', 'such'))).isDirectory()).toBe(true);
  });

  it('refuses what leads outside (making no folder there) unless unconfined, and asks the guard about the real path', async () => {
    await symlink(outside, join(ws, 'out'));
    const opts = { roots: [ws], via, mkdirs: true };
    await expect(resolveContained(join(ws, 'out', 'new', 'x'), opts)).rejects.toBeInstanceOf(OutsideWorkspaceError);
    expect(await exists(join(outside, 'new'))).toBe(false);
    expect(await resolveContained(join(ws, 'out', 'x'), { ...opts, confined: false })).toEqual({ real: join(outside, 'x'), kind: 'missing' });
    const asked: string[] = [];
    const guard = async (real: string) => (asked.push(real), real.endsWith('.env') ? 'secrets' : undefined);
    await symlink(join(ws, '.env'), join(ws, 'innocent'));
    await expect(resolveContained(join(ws, 'innocent'), { roots: [ws], via, guard })).rejects.toMatchObject({ protectedWhy: 'secrets' });
    expect(asked).toEqual([join(ws, '.env')]);
  });
});
