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
 * - otherwise only the entry written here is approved (`approveEntry`, by its content); every
 *   other entry of the file stays held back until the user trusts the folder.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { editConfigFile, readForEdit, type KeyEdit } from '../config/edit.js';
import { parseJsonc } from '../config/jsonc.js';
import { workspaceConfigPath, type WorkspaceConfigTrust } from '../config/load.js';
import { approveEntry, contentHash, recordTrust, trustState } from '../config/trust.js';
import { parseServerEntry } from '../peers/mcp/config.js';
import type { ToolServerStatus } from '../shapes/peer.js';
import { serverNameProblem } from '../shapes/tool-names.js';
import { errorMessage, logger } from '../util/log.js';

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
  /** The merged, effective `mcpServers`. */
  servers(): Record<string, unknown>;
  workspaces(): WorkspaceConfigTrust[];
  /** The user config file (or `--config-file`). */
  userConfigFile(): string;
  /** Workspace.reloadConfig: applies the edited file. */
  reload(): Promise<unknown>;
  status(name: string): ToolServerStatus | undefined;
  restart(name: string): Promise<void>;
  forget(name: string): Promise<void>;
}

const fail = (message: string): { ok: false; error: ManageError } => ({ ok: false, error: { code: 'invalid_request', message } });

export class McpManager {
  /** One change at a time: two edits of one file must not race. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly t: ManageTarget) {}

  private serial<T>(work: () => Promise<Managed<T>>): Promise<Managed<T>> {
    const run = this.queue.then(work, work).catch((e: unknown) => fail(errorMessage(e)));
    this.queue = run;
    return run;
  }

  add(s: NewServer): Promise<Managed<ToolServerStatus>> {
    return this.serial(async () => {
      const { name, entry } = s;
      if (!name.trim()) return fail('The MCP server name must not be blank');
      const badName = serverNameProblem(name);
      if (badName) return fail(`The server name ${badName}`);
      if (Object.hasOwn(this.t.servers(), name)) return fail(`MCP server "${name}" already exists`);
      const parsed = parseServerEntry(name, entry);
      if (!parsed.ok) return fail(parsed.error);
      const target = this.targetFile(s);
      if (!target.ok) return target;
      const { file, root } = target.value;
      const before = readForEdit(file);
      // A held-back entry of the same name in that file would be overwritten unseen.
      if (Object.hasOwn(serversIn(before), name)) return fail(`MCP server "${name}" already exists in ${file} (held back until you trust the folder)`);
      this.write(file, root, name, [{ path: ['mcpServers', name], value: entry }]);
      await this.t.reload();
      const status = this.t.status(name);
      if (!status) return fail(`MCP server "${name}" was written to ${file} but is not configured: see the config problems`);
      return { ok: true, value: status };
    });
  }

  update(name: string, fields: ServerFields): Promise<Managed<Record<string, never>>> {
    return this.serial(async () => {
      const owner = this.owner(name);
      if (!owner.ok) return owner;
      const { file, root, entry } = owner.value;
      const given = Object.entries(fields).filter(([, v]) => v !== undefined);
      if (!given.length) {
        // Nothing to change: ECA restarts it all the same.
        await this.t.restart(name);
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
      this.write(file, root, name, edits);
      await this.t.reload();
      return { ok: true, value: {} };
    });
  }

  remove(name: string): Promise<Managed<{ name: string; removed: true }>> {
    return this.serial(async () => {
      const owner = this.owner(name);
      if (!owner.ok) return owner;
      const { file, root } = owner.value;
      this.write(file, root, name, [{ path: ['mcpServers', name], value: undefined }]);
      // The reconcile stops it and reports it removed (tool/serverRemoved) before we answer.
      await this.t.reload();
      await this.t.forget(name);
      return { ok: true, value: { name, removed: true } };
    });
  }

  /** `mcp/enableServer` / `mcp/disableServer`: `disabled` persisted; the reconcile starts or stops it. */
  setDisabled(name: string, disabled: boolean): Promise<Managed<Record<string, never>>> {
    return this.serial(async () => {
      const owner = this.owner(name);
      if (!owner.ok) return owner;
      const { file, root } = owner.value;
      this.write(file, root, name, [{ path: ['mcpServers', name, 'disabled'], value: disabled ? true : undefined }]);
      await this.t.reload();
      return { ok: true, value: {} };
    });
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

  /**
   * The file an effective entry comes from: the highest layer that has it (each root's file, last
   * root first, then the user file), skipping a workspace file whose entry is held back.
   */
  private owner(name: string): Managed<{ file: string; root?: string; entry: Record<string, unknown> }> {
    if (!Object.hasOwn(this.t.servers(), name)) return fail(`MCP server "${name}" does not exist`);
    const held = new Set(
      this.t
        .workspaces()
        .filter((w) => w.state !== 'trusted')
        .flatMap((w) => w.settings.filter((h) => h.path.length === 2 && h.path[0] === 'mcpServers').map((h) => `${w.file}\0${h.path[1]}`)),
    );
    const files = [
      ...this.t
        .roots()
        .map((root) => ({ file: workspaceConfigPath(root), root }))
        .reverse(),
      { file: this.t.userConfigFile(), root: undefined },
    ];
    for (const { file, root } of files) {
      const entry = serversIn(readForEdit(file))[name];
      if (entry === undefined || held.has(`${file}\0${name}`)) continue;
      return { ok: true, value: { file, ...(root ? { root } : {}), entry: isObject(entry) ? entry : {} } };
    }
    return fail(`MCP server "${name}" is set in initializationOptions or PATCHBAY_CONFIG, not in a config file: patchbay cannot change it there; change it where it is set`);
  }

  /** Edits the file and keeps its trust as the user had it (see the file comment). */
  private write(file: string, root: string | undefined, name: string, edits: KeyEdit[]): void {
    const wasTrusted = root !== undefined && trustState(this.t.home, root, contentHash(readForEdit(file))) === 'trusted';
    const { after } = editConfigFile(file, edits);
    log.info(`${file}: mcpServers.${name} changed from the editor`);
    if (root === undefined) return;
    if (wasTrusted) recordTrust(this.t.home, root, contentHash(after));
    else approveEntry(this.t.home, root, name, serversIn(after)[name]);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The `mcpServers` object of a config file's text ({} when it has none). */
function serversIn(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  const parsed = parseJsonc(text);
  const servers = parsed.ok && isObject(parsed.value) ? parsed.value.mcpServers : undefined;
  return isObject(servers) ? servers : {};
}
