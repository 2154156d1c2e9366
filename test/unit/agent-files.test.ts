import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentFileSources, listAgentFiles } from '../../src/config/agent-files.js';
import { isWithin } from '../../src/util/paths.js';
import { parseFrontMatter, stringList } from '../../src/config/frontmatter.js';
import { PromptSources } from '../../src/core/turn/prompt-sections.js';
import { systemPrompt } from '../../src/core/turn/system-prompt.js';

describe('front-matter', () => {
  it('reads a YAML mapping and the body after it', () => {
    const fm = parseFrontMatter('---\nname: lint\npaths:\n  - "src/**.ts"\n---\n\nBody line\n');
    expect(fm).toEqual({ data: { name: 'lint', paths: ['src/**.ts'] }, body: 'Body line\n', present: true });
  });
  it('takes a file without front-matter as all body', () => {
    expect(parseFrontMatter('Just text\n---\nmore')).toEqual({ data: {}, body: 'Just text\n---\nmore', present: false });
  });
  it('reports broken YAML, a missing closing line and a non-mapping', () => {
    expect(parseFrontMatter('---\nname: [unclosed\n---\nx').error).toMatch(/^YAML: /);
    expect(parseFrontMatter('---\nname: a\nno end').error).toMatch(/closing/);
    expect(parseFrontMatter('---\n- a\n- b\n---\nx').error).toMatch(/mapping/);
  });
  it('turns one string or a list into a list', () => {
    expect(stringList('a')).toEqual(['a']);
    expect(stringList(['a', 3, ' b '])).toEqual(['a', 'b']);
    expect(stringList(undefined)).toEqual([]);
  });
});

describe('agent file locations', () => {
  const base = (): string => tmpdir();
  it('lists user, project and config sources; relative config paths per workspace folder', () => {
    const home = mkdtempSync(join(base(), 'home-'));
    const sources = agentFileSources('skills', { roots: ['/w/a'], env: {}, homeDir: home, configPaths: [{ path: 'extra' }, { path: '/w/a/inside' }, { path: '~/mine' }] });
    expect(sources.map((s) => [s.path, s.scope])).toEqual([
      [join(home, '.config/patchbay/skills'), 'user'],
      [join(home, '.config/eca/skills'), 'user'],
      [join(home, '.agents/skills'), 'user'],
      ['/w/a/.patchbay/skills', 'project'],
      ['/w/a/.eca/skills', 'project'],
      ['/w/a/.agents/skills', 'project'],
      ['/w/a/extra', 'project'],
      ['/w/a/inside', 'project'],
      [join(home, 'mine'), 'user'],
    ]);
  });
  it('walks folders in sorted order, skips dot-folders, reports a missing config path', async () => {
    const root = mkdtempSync(join(base(), 'ws-'));
    mkdirSync(join(root, '.patchbay/rules/sub'), { recursive: true });
    mkdirSync(join(root, '.patchbay/rules/.hidden'), { recursive: true });
    writeFileSync(join(root, '.patchbay/rules/b.md'), 'b');
    writeFileSync(join(root, '.patchbay/rules/a.md'), 'a');
    writeFileSync(join(root, '.patchbay/rules/sub/c.md'), 'c');
    writeFileSync(join(root, '.patchbay/rules/notes.txt'), 'x');
    writeFileSync(join(root, '.patchbay/rules/.hidden/d.md'), 'd');
    const sources = agentFileSources('rules', { roots: [root], env: { XDG_CONFIG_HOME: join(root, 'none') }, homeDir: root, configPaths: [{ path: 'missing.md' }] });
    const { files, problems } = await listAgentFiles(sources, (n) => n.endsWith('.md'));
    expect(files.map((f) => f.path)).toEqual(['a.md', 'b.md', 'sub/c.md'].map((f) => join(root, '.patchbay/rules', f)));
    expect(problems).toEqual([{ path: join(root, 'missing.md'), message: 'not found' }]);
  });
  it('tells inside from outside', () => {
    expect(isWithin('/a/b', '/a/b/c')).toBe(true);
    expect(isWithin('/a/b', '/a/b')).toBe(true);
    expect(isWithin('/a/b', '/a/bc')).toBe(false);
    expect(isWithin('/a/b', '/a/b/..foo')).toBe(true);
  });
});

describe('system prompt sections', () => {
  it('puts stable sections in the cached prefix and dynamic ones after it, by order', () => {
    const sources = new PromptSources();
    sources.set('a', () => [
      { id: 'late', text: 'LATE', stable: true, order: 90 },
      { id: 'dyn', text: 'DYNAMIC', stable: false },
    ]);
    sources.set('b', () => [{ id: 'early', text: 'EARLY', stable: true, order: 10 }]);
    sources.set('bad', () => {
      throw new Error('boom');
    });
    const errors: string[] = [];
    const sections = sources.sections({ chatId: 'c', agent: 'code', roots: ['/w'], stored: [] }, (s) => errors.push(s));
    expect(errors).toEqual(['bad']);
    const p = systemPrompt({ agent: 'code', roots: ['/w'], tools: [], sections });
    const stable = p.text.slice(0, p.stableLength);
    expect(stable.indexOf('EARLY')).toBeLessThan(stable.indexOf('LATE'));
    expect(stable).toContain('Workspace folders:');
    expect(stable).not.toContain('DYNAMIC');
    expect(p.text.slice(p.stableLength)).toBe('\n\nDYNAMIC');
  });
});
