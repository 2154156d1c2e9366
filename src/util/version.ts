/** patchbay's own version (package.json), for `--version` and the handshakes that name the agent. */
import { createRequire } from 'node:module';

let cached: string | undefined;

export function patchbayVersion(): string {
  // Two levels up both from dist/util/ and from the bundle in dist/bundle/.
  cached ??= (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
  return cached;
}

/**
 * The commit this build was made from: dist/build-info.json, written at build time
 * (scripts/build-info.mjs), so a packaged install still names it. "unknown" when the build had
 * no git checkout, or when running unbuilt.
 */
export function patchbayCommit(): string {
  try {
    // One level up both from dist/util/ and from dist/bundle/.
    const info = createRequire(import.meta.url)('../build-info.json') as { commit?: unknown };
    return typeof info.commit === 'string' && /^[0-9a-f]{4,40}$|^unknown$/.test(info.commit) ? info.commit : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** What `patchbay --version` prints: `patchbay 0.1.0 (commit 1a2b3c4)`. */
export function versionLine(): string {
  return `patchbay ${patchbayVersion()} (commit ${patchbayCommit()})`;
}
