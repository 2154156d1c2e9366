/**
 * Imports a user's ES module (an OpenCtx provider, say) by URL. Inside the bundled CLI,
 * `import()` has no loader (the bundle runs as a vm.Script with a V8 code cache, and Node 20
 * cannot combine a code cache with a dynamic-import callback), so bin/patchbay, a real ES
 * module, lends its own `import` as `globalThis.__patchbayImport`.
 */
type Importer = (specifier: string) => Promise<unknown>;

export function importModule(url: string): Promise<unknown> {
  const lent = (globalThis as { __patchbayImport?: Importer }).__patchbayImport;
  return lent ? lent(url) : import(url);
}
