/** ECA's contexts and the runtime's differ only in what ECA calls `mcpResource`: the façade translates both ways. */
import { describe, expect, it } from 'vitest';
import { fromEcaContext, toEcaOffer } from '../../src/server/eca/eca-contexts.js';

const ecaResource = { type: 'mcpResource', uri: 'docs://a', name: 'a', description: 'A doc', mimeType: 'text/plain', server: 'docs' } as const;

describe('ECA contexts', () => {
  it('an ECA mcpResource is a runtime resource with the same fields, and back', () => {
    const inside = fromEcaContext(ecaResource);
    expect(inside).toEqual({ ...ecaResource, type: 'resource' });
    expect(toEcaOffer(inside)).toEqual(ecaResource);
  });

  it('every other context passes through unchanged, and so does a bare cursor offer', () => {
    const file = { type: 'file', path: 'a.ts', linesRange: { start: 1, end: 2 } } as const;
    expect(fromEcaContext(file)).toBe(file);
    expect(toEcaOffer({ type: 'cursor' })).toEqual({ type: 'cursor' });
    expect(toEcaOffer(file)).toBe(file);
  });
});
