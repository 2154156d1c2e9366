/**
 * Workspace trust, as users know it from VS Code's workspace trust and Claude Code's project
 * MCP approval: a folder's `.patchbay/config.json` comes with the folder (a cloned repository),
 * so the settings in it that run code or widen approvals apply only once the user trusted it.
 *
 * The store is `$PATCHBAY_HOME/trust.json` (0600): the workspace root's realpath → the sha256 of
 * that root's config file when it was trusted. Trust is for that content: an edited file (a
 * `git pull`, a new branch) is untrusted again until the user looks at it and trusts it again.
 * Only patchbay's own commands (`/trust`, `patchbay trust`, the `patchbay chat` prompt) write it;
 * nothing a repository can set (a file, an env var in the config) bypasses it.
 *
 * Trust also covers the other files of the folder that it lets do more (issue 31): agent files
 * (their auto-approvals), skill and command files (a link out of the folder), hook scripts (run at
 * all). `files` holds the sha256 of each as it was when trusted (path relative to the folder, `/`
 * separated; see trusted-files.ts). A file new or changed since is treated as an untrusted folder's
 * until the folder is trusted again. A record without `files` (written before they were recorded)
 * covers none of them: the safe reading, told to the user as "trust it again".
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { z } from 'zod';
import { readConfigText } from './config-file.js';

export type TrustState = 'trusted' | 'untrusted' | 'changed';

const entrySchema = z.object({
  sha256: z.string(),
  trustedAt: z.string(),
  /** The folder's other trusted files: path relative to the folder (`/`-separated) → sha256 of its bytes. */
  files: z.record(z.string(), z.string()).optional(),
});
const storeSchema = z.object({
  version: z.literal(1),
  folders: z.record(z.string(), entrySchema),
  /**
   * Single `mcpServers` entries the user added or changed from the editor (`mcp/addServer` …) in a
   * folder not trusted as a whole: folder key → server name → sha256 of the entry as written.
   * The entry runs; the rest of the file stays held back.
   */
  entries: z.record(z.string(), z.record(z.string(), z.string())).optional(),
});
type Store = z.infer<typeof storeSchema>;
export type TrustEntry = z.infer<typeof entrySchema>;

export function trustStorePath(home: string): string {
  return join(home, 'trust.json');
}

export function contentHash(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The key a folder is remembered by: its realpath, so a symlinked checkout is the same folder. */
export function folderKey(root: string): string {
  try {
    return realpathSync(root);
  } catch {
    return resolve(root);
  }
}

/** The store; an absent or unreadable one is empty (nothing trusted), never an error. */
export function readTrustStore(home: string): Store {
  try {
    const read = readConfigText(trustStorePath(home));
    const parsed = read.kind === 'text' ? storeSchema.safeParse(JSON.parse(read.text)) : undefined;
    if (parsed?.success) return parsed.data;
  } catch {
    /* absent, no regular file, too large or not JSON: nothing is trusted */
  }
  return { version: 1, folders: {} };
}

function writeTrustStore(home: string, store: Store): void {
  const file = trustStorePath(home);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  // Written aside and renamed: a crash never leaves a half-written store.
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(store, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
}

/** Is this folder trusted for a config file with this content hash? */
export function trustState(home: string, root: string, sha256: string): TrustState {
  const entry = readTrustStore(home).folders[folderKey(root)];
  if (!entry) return 'untrusted';
  return entry.sha256 === sha256 ? 'trusted' : 'changed';
}

/** The folder's trust record, if the user trusted it. */
export function trustRecord(home: string, root: string): TrustEntry | undefined {
  return readTrustStore(home).folders[folderKey(root)];
}

/**
 * Has the user trusted this folder at all (for any content of its config file, or with none)?
 * What gates running programs the folder ships (its node_modules/.bin): those are not in the
 * config file, so its hash does not matter.
 */
export function isTrustedFolder(home: string, root: string): boolean {
  return Boolean(readTrustStore(home).folders[folderKey(root)]);
}

/**
 * Trusts the folder for a config file with this hash and, when `files` is given, for these files
 * as they are (trusted-files.ts `coveredFiles`); without `files` the ones recorded before stay.
 */
export function recordTrust(home: string, root: string, sha256: string, files?: Record<string, string>): void {
  const store = readTrustStore(home);
  const key = folderKey(root);
  const kept = files ?? store.folders[key]?.files;
  store.folders[key] = { sha256, trustedAt: new Date().toISOString(), ...(kept ? { files: kept } : {}) };
  writeTrustStore(home, store);
}

/**
 * How one of the folder's files stands (`path` inside `root`, `bytes` its content now):
 * `trusted` as recorded, `untrusted` (the folder is not trusted), `changed` (new or edited since
 * the folder was trusted), `unrecorded` (trusted before files were recorded: none is covered).
 */
export type FileTrust = 'trusted' | 'untrusted' | 'changed' | 'unrecorded';

export function fileTrust(home: string, root: string, path: string, bytes: Buffer | string): FileTrust {
  const entry = readTrustStore(home).folders[folderKey(root)];
  if (!entry) return 'untrusted';
  if (!entry.files) return 'unrecorded';
  return entry.files[trustedFileKey(root, path)] === contentHash(bytes) ? 'trusted' : 'changed';
}

/** The key a file is recorded by: its path relative to the folder, `/`-separated. */
export function trustedFileKey(root: string, path: string): string {
  return relative(root, path).split(sep).join('/');
}

/** Why a file's extra powers are held back, for messages: "changed since you trusted /r". */
export function fileTrustWhy(state: Exclude<FileTrust, 'trusted'>, root: string): string {
  if (state === 'untrusted') return `in ${root}, a folder you have not trusted`;
  if (state === 'changed') return `new or changed since you trusted ${root}`;
  return `not covered by the trust of ${root} (given before patchbay recorded each file)`;
}

/** The hash an approved entry is remembered by: its JSON with keys sorted (formatting does not matter). */
export function entryHash(entry: unknown): string {
  return contentHash(stableJson(entry));
}

function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** The `mcpServers` entries of this folder the user approved one by one (name → entry hash). */
export function approvedEntries(home: string, root: string): Record<string, string> {
  return readTrustStore(home).entries?.[folderKey(root)] ?? {};
}

/** Approves one `mcpServers` entry as written (`entry` undefined: forgets the approval). */
export function approveEntry(home: string, root: string, name: string, entry: unknown): void {
  const store = readTrustStore(home);
  const key = folderKey(root);
  const entries = { ...(store.entries ?? {}) };
  const folder = { ...(entries[key] ?? {}) };
  if (entry === undefined) delete folder[name];
  else folder[name] = entryHash(entry);
  if (Object.keys(folder).length) entries[key] = folder;
  else delete entries[key];
  store.entries = entries;
  writeTrustStore(home, store);
}

/** Forgets a folder and the entries approved one by one in it; false when there was neither. */
export function revokeTrust(home: string, root: string): boolean {
  const store = readTrustStore(home);
  const key = folderKey(root);
  const had = Boolean(store.folders[key]);
  const hadEntries = Boolean(store.entries?.[key]);
  if (!had && !hadEntries) return false;
  delete store.folders[key];
  // Revoking takes back the entries approved one by one too.
  if (store.entries) delete store.entries[key];
  writeTrustStore(home, store);
  return true;
}

export function listTrust(home: string): Array<{ folder: string } & TrustEntry> {
  return Object.entries(readTrustStore(home).folders).map(([folder, e]) => ({ folder, ...e }));
}
