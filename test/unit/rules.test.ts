// Rules as ECA reads them (src/eca/features/rules.clj): front-matter filters, globs matched against
// workspace-relative paths, what a chat has in play and has fetched.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderContexts } from '../../src/core/context/index.js';
import { describe, expect, it } from 'vitest';
import { chatRuleState, compileGlob, matchRule, parseRule, ruleApplies, rulesInPlay, type Rule } from '../../src/core/agent-files/rules.js';
import { holdBack } from '../../src/config/held-back.js';
import type { StoredMessage } from '../../src/core/chat/stored-message.js';

const ROOT = '/ws';

function rule(text: string, where: { scope: 'project' | 'global'; root?: string } = { scope: 'project', root: ROOT }): Rule {
  const r = parseRule('/ws/.patchbay/rules/r.md', text, where);
  if (r.ok === false) throw new Error(r.error);
  return r.rule;
}

function problem(text: string): string {
  const r = parseRule('/ws/.patchbay/rules/r.md', text, { scope: 'project', root: ROOT });
  if (r.ok) throw new Error('expected a problem');
  return r.error;
}

describe('parseRule', () => {
  it('a file without front-matter is a static rule for every agent and model, enforce modify', () => {
    const r = rule('Be brief.\n');
    expect(r).toMatchObject({ id: '/ws/.patchbay/rules/r.md', name: 'r.md', scope: 'project', root: ROOT, body: 'Be brief.', enforce: ['modify'] });
    expect(r.paths).toBeUndefined();
    expect(ruleApplies(r, 'plan', undefined)).toBe(true);
  });

  it('reads agent, model, paths and enforce as a string or a list', () => {
    const r = rule('---\nagent: [code, plan]\nmodel: "gpt-5"\npaths:\n  - "src/**.ts"\n  - lib/*.ts\nenforce: [read, modify]\n---\nbody');
    expect(r.agents).toEqual(['code', 'plan']);
    expect(r.models).toEqual(['gpt-5']);
    expect(r.paths).toEqual(['src/**.ts', 'lib/*.ts']);
    expect(r.enforce).toEqual(['read', 'modify']);
  });

  it('refuses broken front-matter, a bad model regex, a bad glob and an unknown enforce value', () => {
    expect(problem('---\npaths: [unclosed\n---\nx')).toMatch(/^YAML/);
    expect(problem('---\nmodel: "gpt-(4"\n---\nx')).toMatch(/bad "model" regex "gpt-\(4"/);
    expect(problem('---\npaths: "src/[a.ts"\n---\nx')).toMatch(/bad "paths" glob "src\/\[a\.ts"/);
    expect(problem('---\npaths: "/etc/*"\n---\nx')).toMatch(/relative to the workspace folder/);
    expect(problem('---\npaths: "../*.ts"\n---\nx')).toMatch(/must not contain/);
    expect(problem('---\nenforce: write\n---\nx')).toMatch(/"enforce" must be read and\/or modify/);
    expect(problem('---\nagent: {a: 1}\n---\nx')).toMatch(/"agent" must be a string or a list/);
  });
});

describe('agent and model filters (ECA agent-matches? / model-matches?)', () => {
  it('agent: only the listed agents', () => {
    const r = rule('---\nagent: plan\n---\nx');
    expect(ruleApplies(r, 'plan', 'a/b')).toBe(true);
    expect(ruleApplies(r, 'code', 'a/b')).toBe(false);
  });

  it('model: a partial-match regex on provider/model; none chosen never matches; (?i) is a flag', () => {
    const r = rule('---\nmodel: "gpt-4"\n---\nx');
    expect(ruleApplies(r, 'code', 'openai/gpt-4o-mini')).toBe(true);
    expect(ruleApplies(r, 'code', 'anthropic/claude')).toBe(false);
    expect(ruleApplies(r, 'code', undefined)).toBe(false);
    expect(ruleApplies(rule('---\nmodel: "^openai/"\n---\nx'), 'code', 'azure/openai/x')).toBe(false);
    expect(ruleApplies(rule('---\nmodel: "(?i)CLAUDE"\n---\nx'), 'code', 'anthropic/claude-sonnet')).toBe(true);
  });
});

describe('globs (ECA documents Java NIO PathMatcher; ours is picomatch with ** inside a name crossing folders)', () => {
  const m = (g: string, p: string): boolean => {
    const f = compileGlob(g);
    if (typeof f === 'string') throw new Error(f);
    return f(p);
  };

  it('follows the table of ECA docs/config/rules.md', () => {
    expect(m('src/*.clj', 'src/foo.clj')).toBe(true);
    expect(m('src/*.clj', 'src/nested/foo.clj')).toBe(false);
    expect(m('src/**/*.clj', 'src/nested/foo.clj')).toBe(true);
    expect(m('src/**.clj', 'src/foo.clj')).toBe(true);
    expect(m('src/**.clj', 'src/nested/deep/foo.clj')).toBe(true);
    expect(m('src/**.clj', 'test/foo.clj')).toBe(false);
    expect(m('docs/**.md', 'docs/config/rules.md')).toBe(true);
    expect(m('docs/**.md', 'src/docs.md')).toBe(false);
    expect(m('src/**.{ts,tsx}', 'src/a/b.tsx')).toBe(true);
    expect(m('**.html', 'a/b/index.html')).toBe(true);
  });

  it('differs where documented: **/ also matches zero folders, and dotfiles match', () => {
    expect(m('src/**/*.clj', 'src/foo.clj')).toBe(true);
    expect(m('**/*.ts', '.github/x.ts')).toBe(true);
  });
});

describe('matchRule (ECA match-path-scoped-rule)', () => {
  const r = rule('---\npaths: "src/**.ts"\n---\nx');

  it('matches an absolute path inside the rule workspace, relative to it', () => {
    expect(matchRule(r, [ROOT], '/ws/src/a/b.ts')).toEqual({ match: true, path: '/ws/src/a/b.ts', root: ROOT, relative: 'src/a/b.ts', pattern: 'src/**.ts' });
  });

  it('says why it does not match', () => {
    expect(matchRule(r, [ROOT], 'src/a.ts').reason).toBe('path-not-absolute');
    expect(matchRule(r, [ROOT, '/other'], '/other/src/a.ts').reason).toBe('outside-rule-workspace');
    expect(matchRule(r, [ROOT], '/ws/README.md').reason).toBe('pattern-mismatch');
    const g = rule('---\npaths: "src/**.ts"\n---\nx', { scope: 'global' });
    expect(matchRule(g, [ROOT], '/elsewhere/src/a.ts').reason).toBe('outside-workspaces');
    // A global rule matches against the innermost workspace folder holding the path.
    expect(matchRule(g, ['/ws', '/ws/pkg'], '/ws/pkg/src/a.ts')).toMatchObject({ match: true, relative: 'src/a.ts' });
  });
});

describe('chatRuleState / rulesInPlay', () => {
  const stored: StoredMessage[] = [
    { role: 'user', text: 'look', contextText: `<file path="${join(ROOT, 'src/x &amp; y.ts')}">\n…\n</file>` },
    tool('read_file', { path: 'lib/r.ts' }),
    tool('move_file', { source: '/ws/src/m.ts', destination: '/ws/src/n.ts' }),
    tool('fetch_rule', { id: '/ws/.patchbay/rules/f.md', path: '/ws/src/a.ts' }),
    tool('fetch_rule', { id: '/ws/.patchbay/rules/failed.md', path: '/ws/src/a.ts' }, true),
    tool('grep', { path: '/ws/src/g.ts' }),
  ];

  it('files of @-mentioned contexts and of file tool calls are in play; successful fetches are fetched', () => {
    const s = chatRuleState(stored, [ROOT]);
    expect(s.files.sort()).toEqual(['/ws/lib/r.ts', '/ws/src/m.ts', '/ws/src/n.ts', '/ws/src/x & y.ts']);
    expect([...s.fetched]).toEqual(['/ws/.patchbay/rules/f.md']);
  });

  it('finds the files of contexts as the renderer really writes them (file, line range, cursor)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'pb-rules-'));
    try {
      writeFileSync(join(root, 'a "q" & b.ts'), 'one\ntwo\n');
      writeFileSync(join(root, 'c.ts'), 'x\n');
      writeFileSync(join(root, 'd.ts'), 'y\n');
      const rendered = await renderContexts(
        [
          { type: 'file', path: join(root, 'a "q" & b.ts') },
          { type: 'file', path: join(root, 'c.ts'), linesRange: { start: 1, end: 1 } },
          { type: 'cursor', path: join(root, 'd.ts'), position: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } } },
        ],
        { roots: [root], signal: new AbortController().signal, webMaxChars: 1000, repoMapMaxEntries: 10 },
      );
      const s = chatRuleState([{ role: 'user', text: 'x', contextText: rendered.text }], [root]);
      expect(s.files).toEqual([join(root, 'a "q" & b.ts'), join(root, 'c.ts'), join(root, 'd.ts')]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('a path-scoped rule is in play when some file in play matches it; static rules never are', () => {
    const ts = rule('---\npaths: "src/**.ts"\n---\nx');
    const md = rule('---\npaths: "**.md"\n---\nx');
    const inPlay = rulesInPlay([ts, md, rule('static')], [ROOT], chatRuleState(stored, [ROOT]).files);
    expect(inPlay.map((x) => x.rule)).toEqual([ts]);
  });
});

describe('held back: rules entries of an untrusted workspace config that leave it', () => {
  it('holds back absolute, ~/ and .. paths, keeps the ones inside', () => {
    const layer = { rules: [{ path: '~/.ssh' }, { path: 'team-rules' }, { path: '/etc' }, { path: '../../x' }, { path: 'a/../b' }] };
    const { kept, held } = holdBack(layer, {});
    expect(kept.rules).toEqual([{ path: 'team-rules' }]);
    // Any `..` segment is held: the check does not know the folder, so it does not guess.
    expect(held.map((h) => `${h.key} ${h.detail}`)).toEqual([
      'rules.0 reads rules from ~/.ssh',
      'rules.2 reads rules from /etc',
      'rules.3 reads rules from ../../x',
      'rules.4 reads rules from a/../b',
    ]);
    expect(holdBack({ includeParentAgentsFiles: true }, {}).held.map((h) => h.key)).toEqual(['includeParentAgentsFiles']);
    expect(holdBack({ includeParentAgentsFiles: false }, {}).held).toEqual([]);
  });
});

function tool(name: string, args: Record<string, unknown>, error = false): StoredMessage {
  return { role: 'tool', toolCallId: name, name, server: 'patchbay', origin: 'native', args, outcome: 'called', error, outputs: [], llmText: '', totalTimeMs: 1 };
}
