/** config/trust.ts: the trust store's own bookkeeping. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { approvedEntries, approveEntry, revokeTrust } from '../../src/config/trust.js';

describe('revokeTrust', () => {
  it('says it revoked something when only entries approved one by one were there', () => {
    const home = mkdtempSync(join(tmpdir(), 'pb-trust-'));
    const root = mkdtempSync(join(tmpdir(), 'pb-trust-root-'));
    approveEntry(home, root, 'mine', { command: 'x' });
    expect(revokeTrust(home, root)).toBe(true);
    expect(approvedEntries(home, root)).toEqual({});
    expect(revokeTrust(home, root)).toBe(false);
  });
});
