/**
 * Which hooks and MCP servers a workspace's own config (`<root>/.patchbay/config.json`) set or
 * changed: those run in the OS sandbox (runtime/spawn-sandbox.ts), the user's own as they are.
 * An entry counts as the workspace's when the merged value differs from what the user's layers
 * alone give (built-in defaults, initializationOptions, PATCHBAY_CONFIG, the user file): a
 * workspace file that adds a hook, replaces one, or changes a field of the user's (its `env`, its
 * `args`) owns the result.
 */
export interface WorkspaceOrigins {
  /** Names of `hooks` entries the workspace's config set or changed. */
  hooks: string[];
  /** Names of `mcpServers` entries the workspace's config set or changed. */
  mcpServers: string[];
}

export const NO_WORKSPACE_ORIGINS: WorkspaceOrigins = { hooks: [], mcpServers: [] };

type Obj = Record<string, unknown>;

/** `userOnly`: the merge of the user's layers; `merged`: with the workspace layers over it (both raw, before defaults). */
export function workspaceOrigins(userOnly: Obj, merged: Obj): WorkspaceOrigins {
  return { hooks: changedEntries(userOnly.hooks, merged.hooks), mcpServers: changedEntries(userOnly.mcpServers, merged.mcpServers) };
}

function changedEntries(before: unknown, after: unknown): string[] {
  if (!isObj(after)) return [];
  const lower = isObj(before) ? before : {};
  return Object.keys(after).filter((name) => !Object.hasOwn(lower, name) || stable(lower[name]) !== stable(after[name]));
}

function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** JSON with object keys sorted: the same entry written in another key order is the same. */
function stable(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`;
  if (isObj(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable(v[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'undefined';
}
