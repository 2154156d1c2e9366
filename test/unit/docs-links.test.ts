/**
 * Every relative link in the docs resolves: the file (or folder) exists, and a `#anchor` names a
 * heading of the target page, slugged the way GitHub renders it. A page moved or a heading renamed
 * without fixing its links fails here, not in a reader's browser.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

/** The Markdown files whose links are checked. */
function docFiles(): string[] {
  const top = ['README.md', 'CONTRIBUTING.md', 'ARCHITECTURE.md', 'CHANGELOG.md'].filter((f) => existsSync(join(ROOT, f)));
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`);
  return [...top, ...docs].map((f) => join(ROOT, f));
}

/** The text outside fenced code blocks and inline code, line by line (a link in code is not a link). */
function proseLines(text: string): string[] {
  const out: string[] = [];
  let fence: string | undefined;
  for (const line of text.split('\n')) {
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (open && open[1][0] === fence[0] && open[1].length >= fence.length) fence = undefined;
      out.push('');
      continue;
    }
    if (open) {
      fence = open[1];
      out.push('');
      continue;
    }
    // An indented code block (4 spaces after a blank line) is rare here; inline code is common.
    out.push(line.replace(/(`+)[^`]*?\1/g, ''));
  }
  return out;
}

/** GitHub's heading anchor: lower case, punctuation dropped (letters, digits, `_`, `-` kept), spaces to `-`. */
function slug(heading: string): string {
  // Outside code spans, links keep their text and HTML tags and bold markers go; inside, every character is text.
  const text = heading
    .split('`')
    .map((part, i) =>
      i % 2 === 1
        ? part
        : part
            .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
            .replace(/<[^>]+>/g, '')
            .replace(/\*\*|__/g, ''),
    )
    .join('')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The anchors a page offers: one per heading, repeated ones numbered `-1`, `-2` as GitHub does. */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fence: string | undefined;
  for (const line of text.split('\n')) {
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (open && open[1][0] === fence[0] && open[1].length >= fence.length) fence = undefined;
      continue;
    }
    if (open) {
      fence = open[1];
      continue;
    }
    const h = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const base = slug(h[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

interface Link {
  file: string;
  line: number;
  target: string;
}

function linksOf(file: string): Link[] {
  const out: Link[] = [];
  proseLines(readFileSync(file, 'utf8')).forEach((text, i) => {
    for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push({ file, line: i + 1, target: m[1] });
  });
  return out;
}

/** Why a link does not resolve, or undefined when it does. */
function problem(link: Link): string | undefined {
  const { target } = link;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto:: not ours to check
  const [path, anchor] = target.split('#', 2) as [string, string | undefined];
  const dest = path === '' ? link.file : resolve(dirname(link.file), decodeURIComponent(path));
  if (!existsSync(dest)) return `${path} does not exist`;
  if (anchor === undefined || !dest.endsWith('.md') || statSync(dest).isDirectory()) return undefined;
  const anchors = anchorsOf(readFileSync(dest, 'utf8'));
  return anchors.has(decodeURIComponent(anchor).toLowerCase()) ? undefined : `no heading #${anchor} in ${relative(ROOT, dest)}`;
}

describe('docs links', () => {
  it('slugs headings as GitHub does', () => {
    expect(slug('Background jobs (`shell_command` `background`, `bg_job`, the Jobs panel)')).toBe('background-jobs-shell_command-background-bg_job-the-jobs-panel');
    expect(slug('ACP editors (Zed, JetBrains, Neovim, Emacs agent-shell)')).toBe('acp-editors-zed-jetbrains-neovim-emacs-agent-shell');
    expect(slug('Logging in from a terminal: `patchbay login`')).toBe('logging-in-from-a-terminal-patchbay-login');
    expect(slug('Provider logins (`providers.<name>.login`)')).toBe('provider-logins-providersnamelogin');
    expect([...anchorsOf('# A\n## Setup\n```sh\n# not a heading\n```\n## Setup\n')]).toEqual(['a', 'setup', 'setup-1']);
  });

  it('finds a broken link and a broken anchor', () => {
    const here = join(ROOT, 'docs', 'x.md');
    expect(problem({ file: here, line: 1, target: 'no-such-page.md' })).toMatch(/does not exist/);
    expect(problem({ file: here, line: 1, target: 'models.md#no-such-heading' })).toMatch(/no heading #no-such-heading in docs\/models.md/);
    expect(problem({ file: here, line: 1, target: 'models.md#model-variants-reasoning-effort' })).toBeUndefined();
  });

  it('every relative link and anchor in README.md, docs/, CONTRIBUTING.md and ARCHITECTURE.md resolves', () => {
    const files = docFiles();
    expect(files.length).toBeGreaterThan(10);
    const broken = files.flatMap(linksOf).flatMap((l) => {
      const why = problem(l);
      return why ? [`${relative(ROOT, l.file)}:${l.line}: (${l.target}) ${why}`] : [];
    });
    expect(broken).toEqual([]);
  });
});
