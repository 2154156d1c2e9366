import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EditorDiagnostic } from '../../src/shapes/tool.js';
import { editorDiagnosticsTool, nativeTools } from '../../src/core/tools/native/index.js';
import { context, removeDir, tempDir, text } from './tools-helpers.js';

let ws: string;
beforeEach(async () => {
  ws = await tempDir();
});
afterEach(async () => {
  await removeDir(ws);
});

describe('nativeTools', () => {
  it('provides the nine ECA-named tools, as patchbay natives with JSON Schemas', () => {
    const tools = nativeTools();
    expect(tools.map((t) => t.name)).toEqual(['read_file', 'directory_tree', 'grep', 'write_file', 'edit_file', 'move_file', 'shell_command', 'editor_diagnostics', 'task']);
    for (const t of tools) {
      expect(t).toMatchObject({ server: 'patchbay', origin: 'native' });
      expect(t.readOnly).toBe(!t.mutates);
      expect(t.inputSchema.type).toBe('object');
      expect(t.inputSchema).not.toHaveProperty('$schema');
      expect(t.description.length).toBeGreaterThan(40);
    }
    const readOnly = tools.filter((t) => t.readOnly).map((t) => t.name);
    // `task` changes only the chat's own task list: ECA allows `eca__task` even in the plan agent.
    expect(readOnly).toEqual(['read_file', 'directory_tree', 'grep', 'editor_diagnostics', 'task']);
  });

  it('derives schemas with ECA argument names and required fields', () => {
    const byName = Object.fromEntries(nativeTools().map((t) => [t.name, t.inputSchema]));
    expect(Object.keys(byName.read_file.properties as object)).toEqual(['path', 'line_offset', 'limit']);
    expect(byName.read_file.required).toEqual(['path']);
    expect(byName.edit_file.required).toEqual(['path', 'original_content', 'new_content']);
    expect(Object.keys(byName.grep.properties as object)).toEqual(['path', 'pattern', 'include', 'max_results']);
    expect(byName.move_file.required).toEqual(['source', 'destination']);
    expect(byName.shell_command.required).toEqual(['command']);
    expect(byName.editor_diagnostics.required ?? []).toEqual([]);
    // ECA task.clj `definitions`.
    expect(Object.keys(byName.task.properties as object)).toEqual(['op', 'id', 'ids', 'active_summary', 'task', 'tasks']);
    expect(byName.task.required).toEqual(['op']);
    expect((byName.task.properties as Record<string, { enum?: string[] }>).op.enum).toEqual(['read', 'plan', 'add', 'update', 'start', 'complete', 'delete', 'clear']);
  });

  it('passes options to shell_command', () => {
    const shell = nativeTools({ shellTimeoutSeconds: 5, maxOutputChars: 1234 }).find((t) => t.name === 'shell_command')!;
    expect(shell.description).toContain('default 5');
    expect(shell.description).toContain('1234 characters');
  });

  it('gives a summary for every tool, even with partial arguments', () => {
    for (const t of nativeTools()) {
      expect(typeof t.summary!({})).toBe('string');
    }
    const read = nativeTools().find((t) => t.name === 'read_file')!;
    expect(read.summary!({ path: 'src/a.ts' })).toBe('Reading file "src/a.ts"');
  });

  it('never throws on garbage arguments', async () => {
    for (const t of nativeTools()) {
      const r = await t.call({ path: 42, command: {}, source: [], pattern: 7 }, context([ws]));
      expect(r.error).toBe(true);
      expect(text(r)).toMatch(new RegExp(`^Invalid arguments for ${t.name}:\n- `));
    }
    const diag = await editorDiagnosticsTool().call({ path: 42 }, context([ws]));
    expect(text(diag)).toBe('Invalid arguments for editor_diagnostics:\n- path: Invalid input: expected string, received number');
  });
});

describe('editor_diagnostics', () => {
  const tool = editorDiagnosticsTool();
  const diag = (file: string, line: number, col: number, severity: EditorDiagnostic['severity'], message: string, source?: string): EditorDiagnostic => ({
    uri: pathToFileURL(file).href,
    severity,
    source,
    message,
    range: { start: { line, character: col }, end: { line, character: col + 1 } },
  });

  it('says so when the editor provides no diagnostics', async () => {
    const r = await tool.call({}, context([ws]));
    expect(r.error).toBe(true);
    expect(text(r)).toMatch(/editor provides no diagnostics/);
  });

  it('formats path:line:col severity [source] message, 1-based, errors first', async () => {
    const calls: (string | undefined)[] = [];
    const editor = {
      getDiagnostics: async (uri?: string) => {
        calls.push(uri);
        return [
          diag(join(ws, 'src/a.ts'), 9, 0, 'warning', 'unused variable', 'eslint'),
          diag(join(ws, 'src/b.ts'), 2, 4, 'error', "Type 'string' is not assignable\n  to type 'number'.", 'ts'),
          diag('/elsewhere/c.ts', 0, 0, 'hint', 'consider const'),
        ];
      },
    };
    const r = await tool.call({}, context([ws], { editor }));
    expect(calls).toEqual([undefined]);
    expect(r.error).toBe(false);
    expect(text(r).split('\n')).toEqual([
      "src/b.ts:3:5 error [ts] Type 'string' is not assignable",
      "      to type 'number'.",
      'src/a.ts:10:1 warning [eslint] unused variable',
      '/elsewhere/c.ts:1:1 hint consider const',
    ]);
  });

  it('asks for one file by URI when a path is given', async () => {
    const calls: (string | undefined)[] = [];
    const editor = {
      getDiagnostics: async (uri?: string) => {
        calls.push(uri);
        return [];
      },
    };
    const r = await tool.call({ path: 'src/a b.ts' }, context([ws], { editor }));
    expect(calls).toEqual([pathToFileURL(join(ws, 'src/a b.ts')).href]);
    expect(calls[0]).toContain('a%20b.ts');
    expect(text(r)).toBe(`No diagnostics for ${join(ws, 'src/a b.ts')}.`);
  });

  it('turns an editor failure into an error result, and honours abort', async () => {
    const failing = { getDiagnostics: async () => Promise.reject(new Error('client went away')) };
    const r = await tool.call({}, context([ws], { editor: failing }));
    expect(r.error).toBe(true);
    expect(text(r)).toMatch(/client went away/);

    const ac = new AbortController();
    const hanging = { getDiagnostics: () => new Promise<EditorDiagnostic[]>(() => {}) };
    const p = tool.call({}, context([ws], { editor: hanging, signal: ac.signal }));
    setTimeout(() => ac.abort(), 20);
    const cancelled = await p;
    expect(cancelled.error).toBe(true);
    expect(text(cancelled)).toMatch(/cancelled/);
  });
});
