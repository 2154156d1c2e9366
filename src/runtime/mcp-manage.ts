/**
 * MCP servers managed from the editor (ECA `mcp/addServer`, `mcp/updateServer`, `mcp/removeServer`,
 * `mcp/enableServer`, `mcp/disableServer`; ECA `src/eca/features/tools/mcp.clj`). Each one edits
 * the config file the entry lives in (config/edit.ts: comments and formatting kept) and then
 * reloads the config: the reconcile that follows starts, restarts or stops the server, exactly
 * as when the user edits the file by hand, and the file watcher then finds nothing new.
 *
 * Workspace trust (config/trust.ts): a workspace file's `mcpServers` run only once the folder is
 * trusted. A change made here is the user's own, so it must not cost them that trust, nor grant
 * trust to what they did not write:
 * - a trusted file (its content as trusted) stays trusted: the new content is recorded;
 * - otherwise only an entry the user adds here, or one they had approved that way before, is
 *   approved (`approveEntry`, by its content); every other entry of the file stays held back.
 * Which entry a change is for is decided from the files as they are now (not as last loaded: a
 * `git pull` may have brought a workspace entry of the same name since): a workspace entry counts
 * only when the folder is trusted for that content or the entry was approved as it is.
 */
import { existsSync, realpathSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { editText, readForEdit, writeAtomically, type KeyEdit } from '../config/edit.js';
import { parseJsonc } from '../config/jsonc.js';
import { workspaceConfigPath } from '../config/load.js';
import { approveEntry, approvedEntries, contentHash, entryHash, folderKey, recordTrust, trustState } from '../config/trust.js';
import { parseServerEntry } from '../peers/mcp/config.js';
import type { ToolServerStatus } from '../shapes/peer.js';
import { serverNameProblem } from '../shapes/tool-names.js';
import { errorMessage, logger } from '../util/log.js';
import { maskedUrl } from '../util/url.js';

const log = logger('mcp-manage');

/** ECA answers every refusal with this code (`handlers.clj` `mcp-add-server`). */
export type ManageError = { code: 'invalid_request'; message: string };
export type Managed<T> = { ok: true; value: T } | { ok: false; error: ManageError };

/** A new entry: stdio (`command`, `args`, `env`) or remote (`url`, `headers`, OAuth client fields). */
export interface NewServer {
  name: string;
  entry: Record<string, unknown>;
  scope: 'global' | 'workspace';
  /** Which root's `.patchbay/config.json`, for `scope: 'workspace'`. */
  workspaceUri?: string;
}

/** `mcp/updateServer`: the connection fields to change. */
export interface ServerFields {
  command?: string;
  args?: string[];
  url?: string;
  env?: Record<string, string>;
  headers?: Record<string, string>;
}

/** What the manager needs from the workspace. */
export interface ManageTarget {
  home: string;
  roots(): string[];
  /** The merged, effective `mcpServers` (`${env:…}` filled in). */
  servers(): Record<string, unknown>;
  /** The user config file (or `--config-file`). */
  userConfigFile(): string;
  /** `pureConfig: true` in initializationOptions: no config file is read. */
  pureConfig?(): boolean;
  /** Workspace.reloadConfig: applies the edited file; `error` when a config file is not JSON. */
  reload(): Promise<{ applied: boolean; error?: string }>;
  status(name: string): ToolServerStatus | undefined;
  restart(name: string): Promise<void>;
  forget(name: string): Promise<void>;
}

/** A config file that has the entry, and why patchbay may change it there. */
interface Layer {
  file: string;
  root?: string;
  text: string;
  entry: Record<string, unknown>;
  /** 'entry': approved one by one (an untrusted folder): a change is approved again, as written. */
  by: 'user' | 'folder' | 'entry';
}

const fail = (message: string): { ok: false; error: ManageError } => ({ ok: false, error: { code: 'invalid_request', message } });

/**
 * What the editor shows in place of a secret (util/url.ts maskedUrl). Written `\u2026`: a
 * non-Latin-1 character in a regex literal makes V8 keep the whole bundle as UTF-16
 * (test/unit/bundle-latin1.test.ts).
 */
const MASK = /\u2026|%E2%80%A6/i;

export class McpManager {
  /** One change at a time: two edits of one file must not race. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly t: ManageTarget) {}

  private serial<T>(work: () => Promise<Managed<T>>): Promise<Managed<T>> {
    // Caught up first: the config in use is then the files' (a save the watcher has not applied yet).
    const caughtUp = async () => {
      await this.t.reload().catch(() => undefined);
      return work();
    };
    const run = this.queue.then(caughtUp, caughtUp).catch((e: unknown) => fail(errorMessage(e)));
    this.queue = run;
    return run;
  }

  add(s: NewServer): Promise<Managed<ToolServerStatus>> {
    return this.serial(async () => {
      const { name, entry } = s;
      if (!name.trim()) return fail('The MCP server name must not be blank');
      if (this.t.pureConfig?.())
        return fail('The editor set pureConfig: true, so patchbay reads no config file and a server added to one would not run: add it to the editor’s own MCP settings instead');
      // A config file cannot hold these names: JSON parsing drops them.
      if (['__proto__', 'constructor', 'prototype'].includes(name)) return fail(`The server name "${name}" is reserved; choose another`);
      const badName = serverNameProblem(name);
      if (badName) return fail(`The server name ${badName}`);
      if (Object.hasOwn(this.t.servers(), name)) return fail(`MCP server "${name}" already exists`);
      const parsed = parseServerEntry(name, entry);
      if (!parsed.ok) return fail(parsed.error);
      const target = this.targetFile(s);
      if (!target.ok) return target;
      const { file, root } = target.value;
      const text = readForEdit(file);
      // A held-back entry of the same name in that file would be overwritten unseen.
      if (Object.hasOwn(serversIn(text), name)) return fail(`MCP server "${name}" already exists in ${file} (held back until you trust the folder)`);
      this.write({ file, ...(root ? { root } : {}), text }, name, [{ path: ['mcpServers', name], value: entry }], true);
      const reloaded = await this.applied(file);
      if (!reloaded.ok) return reloaded;
      const status = this.t.status(name);
      if (!status) return fail(`MCP server "${name}" was written to ${file} but is not configured: see the config problems`);
      return { ok: true, value: status };
    });
  }

  update(name: string, fields: ServerFields): Promise<Managed<Record<string, never>>> {
    return this.serial(async () => {
      const owner = this.owner(name);
      if (!owner.ok) return owner;
      const layer = owner.value;
      const { entry } = layer;
      const raw = this.keepRaw(name, entry, fields);
      if (!raw.ok) return raw;
      const given = Object.entries(raw.value).filter(([, v]) => v !== undefined);
      if (!given.length) {
        // Nothing to change: ECA restarts it all the same; a disabled one stays off.
        if (this.t.status(name)?.status !== 'disabled') await this.t.restart(name);
        return { ok: true, value: {} };
      }
      // Switching transport drops the other one's keys (ECA `update-server!`), and `type`, which names one.
      const stripped = fields.url !== undefined ? ['command', 'args', 'env', 'cwd', 'type'] : fields.command !== undefined || fields.args !== undefined ? ['url', 'headers', 'type'] : [];
      const next: Record<string, unknown> = { ...entry };
      for (const k of stripped) delete next[k];
      Object.assign(next, Object.fromEntries(given));
      const parsed = parseServerEntry(name, next);
      if (!parsed.ok) return fail(parsed.error);
      const edits: KeyEdit[] = [
        ...stripped.filter((k) => Object.hasOwn(entry, k)).map((k) => ({ path: ['mcpServers', name, k], value: undefined })),
        ...given.map(([k, v]) => ({ path: ['mcpServers', name, k], value: v })),
      ];
      this.write(layer, name, edits, layer.by === 'entry');
      const reloaded = await this.applied(layer.file);
      return reloaded.ok ? { ok: true, value: {} } : reloaded;
    });
  }

  remove(name: string): Promise<Managed<{ name: string; removed: true }>> {
    return this.serial(async () => {
      const owner = this.owner(name);
      if (!owner.ok) return owner;
      this.write(owner.value, name, [{ path: ['mcpServers', name], value: undefined }], owner.value.by === 'entry');
      // The reconcile stops it and reports it removed (tool/serverRemoved) before we answer.
      const reloaded = await this.applied(owner.value.file);
      if (!reloaded.ok) return reloaded;
      await this.t.forget(name);
      return { ok: true, value: { name, removed: true } };
    });
  }

  /**
   * `mcp/enableServer` / `mcp/disableServer`: `disabled` persisted; the reconcile starts or stops
   * it. Enabling clears `disabled` in every file that sets it for the entry (a lower layer's would
   * still merge in), and starts a server that was only stopped: ECA's `enable-server!` always starts it.
   */
  setDisabled(name: string, disabled: boolean): Promise<Managed<Record<string, never>>> {
    return this.serial(async () => {
      const layers = this.layers(name);
      if (!layers.ok) return layers;
      const targets = disabled ? layers.value.slice(0, 1) : layers.value.filter((l) => Object.hasOwn(l.entry, 'disabled'));
      for (const layer of targets) this.write(layer, name, [{ path: ['mcpServers', name, 'disabled'], value: disabled ? true : undefined }], layer.by === 'entry');
      const reloaded = await this.applied(targets.map((l) => l.file).join(', ') || 'no file');
      if (!reloaded.ok) return reloaded;
      const now = this.t.status(name)?.status;
      if (!disabled && (now === 'stopped' || now === 'failed' || now === 'disabled')) await this.t.restart(name);
      return { ok: true, value: {} };
    });
  }

  /** The reload after a write; a refused one (a config file that is not JSON) is an error, not success. */
  private async applied(file: string): Promise<Managed<true>> {
    const r = await this.t.reload();
    if (r.error) return fail(`${file} was changed, but patchbay keeps the config it had: ${r.error}`);
    return { ok: true, value: true };
  }

  /** Where a new entry goes: the user file, or the named root's `.patchbay/config.json`. */
  private targetFile(s: NewServer): Managed<{ file: string; root?: string }> {
    if (s.scope !== 'workspace') return { ok: true, value: { file: this.t.userConfigFile() } };
    if (!s.workspaceUri) return fail('scope "workspace" needs workspaceUri: the workspace folder whose .patchbay/config.json gets the server');
    let path: string;
    try {
      path = resolve(s.workspaceUri.startsWith('file:') ? fileURLToPath(s.workspaceUri) : s.workspaceUri);
    } catch (e) {
      return fail(`workspaceUri "${s.workspaceUri}" is not a file URI: ${errorMessage(e)}`);
    }
    const root = this.t.roots().find((r) => resolve(r) === path);
    if (!root) return fail(`workspaceUri "${s.workspaceUri}" is not an open workspace folder`);
    return { ok: true, value: { file: workspaceConfigPath(root), root } };
  }

  /** The file an effective entry comes from: the highest layer patchbay may change it in. */
  private owner(name: string): Managed<Layer> {
    const layers = this.layers(name);
    return layers.ok ? { ok: true, value: layers.value[0]! } : layers;
  }

  /**
   * Every config file that has the entry, highest first (each root's file, last root first, then
   * the user file), read now. A workspace file's entry counts only when the folder is trusted for
   * that file's content or the entry was approved as it is; else it is held back and skipped. A
   * file that is not JSON is skipped too: it must not block a change to an entry in another file.
   */
  private layers(name: string): Managed<[Layer, ...Layer[]]> {
    if (!Object.hasOwn(this.t.servers(), name)) return fail(`MCP server "${name}" does not exist`);
    const files = [
      ...this.t
        .roots()
        .map((root) => ({ file: workspaceConfigPath(root), root }))
        .reverse(),
      { file: this.t.userConfigFile(), root: undefined },
    ];
    const found: Layer[] = [];
    const unreadable: string[] = [];
    for (const { file, root } of files) {
      let text: string;
      try {
        text = readForEdit(file);
      } catch (e) {
        unreadable.push(errorMessage(e));
        continue;
      }
      const value = serversIn(text)[name];
      if (value === undefined) continue;
      const entry = isObject(value) ? value : {};
      const layer = { file, text, entry, ...(root ? { root } : {}) };
      if (root === undefined) found.push({ ...layer, by: 'user' });
      else if (trustState(this.t.home, root, contentHash(text)) === 'trusted') found.push({ ...layer, by: 'folder' });
      else if (approvedEntries(this.t.home, root)[name] === entryHash(value)) found.push({ ...layer, by: 'entry' });
    }
    const [first, ...rest] = found;
    if (first) return { ok: true, value: [first, ...rest] };
    if (unreadable.length) return fail(`MCP server "${name}" cannot be changed: ${unreadable.join('; ')}`);
    return fail(`MCP server "${name}" is set in initializationOptions or PATCHBAY_CONFIG, not in a config file: patchbay cannot change it there; change it where it is set`);
  }

  /**
   * The editor shows an entry as patchbay runs it: `${env:…}` filled in, the URL's secrets masked
   * (util/url.ts maskedUrl). A value sent back as shown is the raw one unchanged: written as
   * given, it would put the secret into the file, or a mask in place of it.
   */
  private keepRaw(name: string, raw: Record<string, unknown>, fields: ServerFields): Managed<ServerFields> {
    const shown = this.t.servers()[name];
    const eff = isObject(shown) ? shown : {};
    const out: ServerFields = { ...fields };
    if (fields.command !== undefined && fields.command === eff.command && typeof raw.command === 'string') out.command = raw.command;
    if (fields.args) {
      const effArgs = Array.isArray(eff.args) ? eff.args : [];
      const rawArgs = Array.isArray(raw.args) ? raw.args : [];
      out.args = fields.args.map((a, i) => (a === effArgs[i] && typeof rawArgs[i] === 'string' ? rawArgs[i] : a));
    }
    if (fields.url !== undefined) {
      const rawUrl = typeof raw.url === 'string' ? raw.url : undefined;
      let url = fields.url;
      if (rawUrl && typeof eff.url === 'string' && url === maskedUrl(eff.url)) url = rawUrl;
      else if (rawUrl) url = unmaskUrl(url, rawUrl);
      if (MASK.test(url)) return fail(`The URL for "${name}" holds a masked value (…) that patchbay cannot match to the current URL: type the whole URL, secrets included`);
      out.url = url;
    }
    return { ok: true, value: out };
  }

  /** Edits the file and keeps its trust as the user had it (see the file comment). */
  private write(at: { file: string; root?: string; text: string }, name: string, edits: KeyEdit[], approve: boolean): void {
    const { file, root } = at;
    const before = readForEdit(file);
    // Read again: a change since the entry was chosen (a `git pull`) must not be approved unseen.
    if (before !== at.text) throw new Error(`${file} changed on disk meanwhile; try again`);
    if (root !== undefined) insideRoot(file, root);
    const wasTrusted = root !== undefined && trustState(this.t.home, root, contentHash(before)) === 'trusted';
    const after = editText(before, edits);
    writeAtomically(file, after);
    log.info(`${file}: mcpServers.${name} changed from the editor`);
    if (root === undefined) return;
    if (wasTrusted) recordTrust(this.t.home, root, contentHash(after));
    else if (approve) approveEntry(this.t.home, root, name, serversIn(after)[name]);
  }
}

/** A workspace file reached through a symlink (`.patchbay` → elsewhere) is not the folder's: refused. */
function insideRoot(file: string, root: string): void {
  let p = file;
  while (!existsSync(p) && dirname(p) !== p) p = dirname(p);
  const real = realpathSync(p);
  const top = folderKey(root);
  if (real !== top && !real.startsWith(top + sep)) throw new Error(`${file} leads outside the workspace folder ${root} (to ${real}): patchbay does not write there`);
}

/**
 * Puts back what maskedUrl hid (each `…` query value, the user:password) from the raw URL when the
 * given one has the same scheme, host and path; anything else is left as given.
 */
function unmaskUrl(given: string, raw: string): string {
  const PARTS = /^([a-z][a-z0-9+.-]*:\/\/)(?:([^@/?#]*)@)?([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/i;
  const g = PARTS.exec(given);
  const r = PARTS.exec(raw);
  if (!g || !r) return given;
  const path = (p: string | undefined) => (p && p !== '/' ? p : '');
  if (g[1]!.toLowerCase() !== r[1]!.toLowerCase() || g[3]!.toLowerCase() !== r[3]!.toLowerCase() || path(g[4]) !== path(r[4])) return given;
  const rawQuery = new Map((r[5]?.slice(1).split('&') ?? []).map((pair) => [pair.split('=')[0]!, pair] as const));
  const query = g[5]
    ?.slice(1)
    .split('&')
    .map((pair) => {
      const [k, v] = [pair.split('=')[0]!, pair.slice(pair.indexOf('=') + 1)];
      return pair.includes('=') && /^(\u2026|%E2%80%A6)$/i.test(v) ? (rawQuery.get(k) ?? pair) : pair;
    })
    .join('&');
  const user = g[2] ?? r[2];
  return `${g[1]}${user !== undefined ? `${user}@` : ''}${g[3]}${g[4]}${query !== undefined ? `?${query}` : ''}${g[6] ?? r[6] ?? ''}`;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The `mcpServers` object of a config file's text ({} when it has none). */
function serversIn(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  const parsed = parseJsonc(text);
  const servers = parsed.ok && isObject(parsed.value) ? parsed.value.mcpServers : undefined;
  return isObject(servers) ? servers : {};
}
