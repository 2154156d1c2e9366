/** patchbay's own version (package.json), for `--version` and the handshakes that name the agent. */
import { createRequire } from 'node:module';

let cached: string | undefined;

export function patchbayVersion(): string {
  // Two levels up both from dist/util/ and from the bundle in dist/bundle/.
  cached ??= (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
  return cached;
}
