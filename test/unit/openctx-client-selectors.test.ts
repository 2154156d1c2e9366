/** OpenCtx selectors (spec "Meta": Selector): path globs, contentContains, all-of / any-of, none vs empty. */
import { describe, expect, it } from 'vitest';
import { pathToFileURL } from 'node:url';
import { matchMessageSelectors, matchSelector, matchSelectors, pathCandidates } from '../../src/peers/openctx/client/index.js';

const fileUri = pathToFileURL('/home/alice/proj/src/app/main.ts').href;
const httpsUri = 'https://github.com/acme/widgets/blob/main/README.md';

describe('pathCandidates', () => {
  it('gives hostname+path and the path alone, without leading slashes', () => {
    expect(pathCandidates(httpsUri)).toEqual(['github.com/acme/widgets/blob/main/README.md', 'acme/widgets/blob/main/README.md']);
  });
  it('for file: URLs (empty hostname) both readings are the path; a containing root adds the relative path', () => {
    expect(pathCandidates(fileUri)).toEqual(['home/alice/proj/src/app/main.ts']);
    expect(pathCandidates(fileUri, ['/home/alice/proj', '/elsewhere'])).toEqual(['home/alice/proj/src/app/main.ts', 'src/app/main.ts']);
  });
  it('decodes percent-escapes so globs see real names', () => {
    expect(pathCandidates(pathToFileURL('/tmp/my file.ts').href)).toEqual(['tmp/my file.ts']);
  });
});

describe('matchSelector: path', () => {
  it('a glob over hostname+path matches (the spec reading)', () => {
    expect(matchSelector({ path: 'github.com/**' }, { uri: httpsUri })).toBe(true);
    expect(matchSelector({ path: 'github.com/acme/*/blob/**/*.md' }, { uri: httpsUri })).toBe(true);
    expect(matchSelector({ path: 'gitlab.com/**' }, { uri: httpsUri })).toBe(false);
  });
  it('a glob over the path alone matches (the reference-client reading)', () => {
    expect(matchSelector({ path: 'acme/widgets/**' }, { uri: httpsUri })).toBe(true);
    expect(matchSelector({ path: 'home/alice/**/*.ts' }, { uri: fileUri })).toBe(true);
    expect(matchSelector({ path: 'other/**' }, { uri: httpsUri })).toBe(false);
  });
  it('extension globs match at any depth; wrong extensions do not', () => {
    expect(matchSelector({ path: '**/*.ts' }, { uri: fileUri })).toBe(true);
    expect(matchSelector({ path: '**/*.{js,ts}' }, { uri: fileUri })).toBe(true);
    expect(matchSelector({ path: '**/*.py' }, { uri: fileUri })).toBe(false);
    expect(matchSelector({ path: '*.ts' }, { uri: fileUri })).toBe(false);
  });
  it('a glob relative to a workspace root matches only when the root is given', () => {
    expect(matchSelector({ path: 'src/**/*.ts' }, { uri: fileUri })).toBe(false);
    expect(matchSelector({ path: 'src/**/*.ts' }, { uri: fileUri }, ['/home/alice/proj'])).toBe(true);
    expect(matchSelector({ path: 'src/**/*.ts' }, { uri: fileUri }, ['/home/bob'])).toBe(false);
  });
  it('dot files are matched by **', () => {
    expect(matchSelector({ path: '**/*.json' }, { uri: pathToFileURL('/p/.vscode/settings.json').href })).toBe(true);
  });
});

describe('matchSelector: contentContains', () => {
  it('is a literal substring test, not a pattern', () => {
    expect(matchSelector({ contentContains: 'TODO' }, { uri: fileUri, content: 'x\n// TODO: y' })).toBe(true);
    expect(matchSelector({ contentContains: 'TODO' }, { uri: fileUri, content: 'todo lowercase' })).toBe(false);
    expect(matchSelector({ contentContains: 'a.*b' }, { uri: fileUri, content: 'axxb' })).toBe(false);
    expect(matchSelector({ contentContains: 'a.*b' }, { uri: fileUri, content: 'see a.*b' })).toBe(true);
  });
  it('fails when the content is unknown', () => {
    expect(matchSelector({ contentContains: 'TODO' }, { uri: fileUri })).toBe(false);
  });
});

describe('matchSelector: both conditions', () => {
  const sel = { path: '**/*.ts', contentContains: 'import React' };
  it('holds only when every condition holds', () => {
    expect(matchSelector(sel, { uri: fileUri, content: "import React from 'react'" })).toBe(true);
    expect(matchSelector(sel, { uri: fileUri, content: 'no react here' })).toBe(false);
    expect(matchSelector(sel, { uri: pathToFileURL('/x/a.py').href, content: 'import React' })).toBe(false);
  });
  it('a selector with no conditions matches everything', () => {
    expect(matchSelector({}, { uri: fileUri })).toBe(true);
  });
});

describe('matchSelectors', () => {
  it('undefined selects every resource', () => {
    expect(matchSelectors(undefined, { uri: fileUri })).toBe(true);
    expect(matchSelectors(undefined, { uri: 'not a url at all' })).toBe(true);
  });
  it('an empty list selects none', () => {
    expect(matchSelectors([], { uri: fileUri, content: 'anything' })).toBe(false);
  });
  it('any one selector of the list may match', () => {
    const list = [{ path: '**/*.py' }, { contentContains: 'MAGIC' }];
    expect(matchSelectors(list, { uri: pathToFileURL('/a/b.py').href, content: '' })).toBe(true);
    expect(matchSelectors(list, { uri: fileUri, content: 'has MAGIC' })).toBe(true);
    expect(matchSelectors(list, { uri: fileUri, content: 'plain' })).toBe(false);
  });
});

describe('matchMessageSelectors', () => {
  it('tests regex patterns; undefined selects all; an invalid pattern never matches', () => {
    expect(matchMessageSelectors(undefined, 'hi')).toBe(true);
    expect(matchMessageSelectors([], 'hi')).toBe(false);
    expect(matchMessageSelectors([{ pattern: 'ENG-\\d+' }], 'look at ENG-42')).toBe(true);
    expect(matchMessageSelectors([{ pattern: 'ENG-\\d+' }], 'look at ENG-x')).toBe(false);
    expect(matchMessageSelectors([{ pattern: '(' }], '(')).toBe(false);
  });
});
