/**
 * acp/registry/patchbay holds what a pull request to the ACP registry (github.com/
 * agentclientprotocol/registry) adds: `agent.json` and a 16×16 monochrome `icon.svg`. These tests
 * check the rules the registry's CI applies that can be checked offline (its agent.schema.json
 * and .github/workflows/build_registry.py: required fields, the id pattern equal to the folder
 * name, a semantic version that the npx package pins too, no `@latest`, and an icon that is
 * square, 16×16, uses currentColor and hard-codes no colour), plus that the entry says what
 * package.json says, so a release cannot leave it behind.
 */
import { readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

const ROOT = resolve(import.meta.dirname, '../..');
const DIR = join(ROOT, 'acp/registry/patchbay');

const stringMap = z.record(z.string(), z.string());
const packageDistribution = z.strictObject({ package: z.string().min(1), args: z.array(z.string()).optional(), env: stringMap.optional() });
const platform = z.enum(['darwin-aarch64', 'darwin-x86_64', 'linux-aarch64', 'linux-x86_64', 'windows-aarch64', 'windows-x86_64']);
const binaryTarget = z.strictObject({ archive: z.url(), cmd: z.string(), args: z.array(z.string()).optional(), env: stringMap.optional() });

/** The registry's agent entry, as its agent.schema.json (draft-07) states it. */
const agentEntry = z.object({
  id: z.string().regex(/^[a-z][a-z0-9-]*$/),
  name: z.string().min(1),
  version: z.string().regex(/^[0-9]+\.[0-9]+\.[0-9]+/),
  description: z.string().min(1),
  repository: z.url().optional(),
  authors: z.array(z.string()).optional(),
  license: z.string().optional(),
  icon: z.string().optional(),
  distribution: z
    .strictObject({ binary: z.partialRecord(platform, binaryTarget).optional(), npx: packageDistribution.optional(), uvx: packageDistribution.optional() })
    .refine((d) => Object.keys(d).length > 0, 'distribution needs at least one of binary, npx, uvx'),
});

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  license: string;
  repository?: string | { url: string };
  bin: Record<string, string>;
};
const entry = JSON.parse(readFileSync(join(DIR, 'agent.json'), 'utf8')) as Record<string, any>;
const icon = readFileSync(join(DIR, 'icon.svg'), 'utf8');

/** `name@version` → version, for scoped (`@scope/name@1.2.3`) and plain names alike. */
function npmSpecVersion(spec: string): string | undefined {
  const at = spec.lastIndexOf('@');
  return at > 0 ? spec.slice(at + 1) : undefined;
}

/** What the registry's CI says against an icon: the same checks, phrased as its messages are. */
function iconProblems(svg: string): string[] {
  const problems: string[] = [];
  const allowed = new Set(['currentcolor', 'none', 'inherit']);
  const width = /<svg[^>]*\swidth=["'](\d+)/.exec(svg)?.[1];
  const height = /<svg[^>]*\sheight=["'](\d+)/.exec(svg)?.[1];
  if (width === undefined || height === undefined) problems.push('no width/height on <svg>');
  else if (width !== '16' || height !== '16') problems.push(`icon is ${width}x${height}, not 16x16`);
  for (const m of svg.matchAll(/\b(fill|stroke)\s*=\s*["']([^"']+)["']/gi)) {
    if (!allowed.has(m[2].trim().toLowerCase())) problems.push(`hard-coded ${m[1]}="${m[2]}"`);
  }
  for (const m of svg.matchAll(/\bstyle\s*=\s*["']([^"']+)["']/gi)) {
    for (const d of m[1].matchAll(/\b(fill|stroke)\s*:\s*([^;]+)/gi)) {
      if (!allowed.has(d[2].trim().toLowerCase())) problems.push(`hard-coded style ${d[1]}: ${d[2].trim()}`);
    }
  }
  // A colour set any other way (a <style> sheet, stop-color, a gradient) is not monochrome either.
  if (/<style|stop-color|Gradient|color\s*=\s*["'](?!currentColor)/i.test(svg)) problems.push('colour set outside fill/stroke');
  if (!/currentColor/i.test(svg)) problems.push('no currentColor');
  return problems;
}

describe('ACP registry entry (acp/registry/patchbay)', () => {
  it('agent.json matches the registry schema and its id is the folder name', () => {
    const parsed = agentEntry.safeParse(entry);
    expect(parsed.success, parsed.error?.message).toBe(true);
    expect(entry.id).toBe(basename(DIR));
  });

  it('says what package.json says: name (the command), version, license, repository', () => {
    // The display name is the command's; the package (patchbay-ai: npm's `patchbay` is another
    // project) is what npx installs, below.
    expect(entry.name).toBe(Object.keys(pkg.bin)[0]);
    expect(pkg.name).toBe('patchbay-ai');
    expect(entry.version).toBe(pkg.version);
    expect(entry.license).toBe(pkg.license);
    const repo = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
    // package.json names no repository yet; once it does, the entry must carry the same one.
    if (repo) expect(entry.repository).toBe(repo.replace(/^git\+/, '').replace(/\.git$/, ''));
    else expect(entry.repository).toBeUndefined();
  });

  it('is started as `npx patchbay-ai@<version> acp`, the version pinned (the registry refuses @latest)', () => {
    expect(entry.distribution).toEqual({ npx: { package: `${pkg.name}@${pkg.version}`, args: ['acp'] } });
    expect(npmSpecVersion(entry.distribution.npx.package)).toBe(entry.version);
    // `npx patchbay-ai` runs the package's one bin; it must be the patchbay command.
    expect(Object.keys(pkg.bin)).toEqual(['patchbay']);
  });

  it('icon.svg is 16×16, square and monochrome (currentColor, no hard-coded colour)', () => {
    expect(iconProblems(icon)).toEqual([]);
  });

  it('the icon check catches what the registry refuses', () => {
    expect(iconProblems(icon.replace(/currentColor/g, '#ff0000'))).toEqual(expect.arrayContaining([expect.stringContaining('#ff0000'), 'no currentColor']));
    expect(iconProblems(icon.replace('width="16"', 'width="24"'))).toEqual([expect.stringContaining('24x16')]);
    expect(iconProblems(icon.replace('<path', '<path style="fill: red"'))).toEqual([expect.stringContaining('red')]);
  });
});
