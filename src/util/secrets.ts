/**
 * Where patchbay keeps what must stay secret: API keys entered at login, OAuth access and refresh
 * tokens (providers and MCP servers). The OS keychain when there is one we can drive without a
 * window (macOS `security`, the Secret Service through libsecret's `secret-tool` on Linux), else
 * one 0600 JSON file under `$PATCHBAY_HOME`. `PATCHBAY_SECRET_STORE=file|keychain` forces one.
 *
 * Every value that passes through here is handed to the log's redaction (`rememberSecret`), so a
 * token that ends up in an error message from some peer is still never written to a log.
 *
 * Keys are short names such as `provider/openai` or `mcp/<server>/tokens`; values are strings
 * (callers JSON-encode what has structure).
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from './private-dir.js';
import { errorMessage, logger, rememberSecret } from './log.js';
import { withFileLock } from './file-lock.js';

const log = logger('secrets');

/** The keychain service name every entry is filed under. */
const SERVICE = 'patchbay';
/** A keychain that wants to show an unlock dialog would otherwise hang the caller. */
const KEYCHAIN_TIMEOUT_MS = 5_000;

export interface SecretStore {
  /** 'keychain' or 'file': for doctor and the docs, never the values. */
  readonly kind: 'keychain' | 'file';
  /** Where, in words: the keychain's name or the file's path. */
  readonly where: string;
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
}

export interface SecretStoreOptions {
  env: NodeJS.ProcessEnv;
  /** patchbay's home (`patchbayHome(env)`): the file store lives in it. */
  home: string;
}

/** The store for this machine: the keychain where one is usable, else the 0600 file. */
export function openSecretStore(o: SecretStoreOptions): SecretStore {
  const file = new FileSecretStore(join(o.home, 'secrets.json'));
  const wanted = o.env.PATCHBAY_SECRET_STORE;
  if (wanted === 'file') return file;
  const keychain = keychainFor(o.env);
  if (!keychain) {
    if (wanted === 'keychain') log.warn(`PATCHBAY_SECRET_STORE=keychain, but no keychain is usable here; secrets go to ${file.where}`);
    return file;
  }
  return new FallbackStore(keychain, file);
}

/** A store in a JSON object in one file, written whole (temp file + rename) and only ever 0600. */
export class FileSecretStore implements SecretStore {
  readonly kind = 'file' as const;
  constructor(readonly where: string) {}

  private read(): Record<string, string> {
    if (!existsSync(this.where)) return {};
    try {
      const parsed: unknown = JSON.parse(readFileSync(this.where, 'utf8'));
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not a JSON object');
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(parsed)) if (typeof v === 'string') out[k] = rememberSecret(v);
      return out;
    } catch (e) {
      // Never overwrite what we cannot read: the user may want those secrets back.
      throw new Error(`Cannot read the secrets file ${this.where}: ${errorMessage(e)}`);
    }
  }

  private write(all: Record<string, string>): void {
    ensurePrivateDir(join(this.where, '..'));
    const tmp = `${this.where}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(all, null, 2) + '\n', { mode: PRIVATE_FILE_MODE });
    renameSync(tmp, this.where);
  }

  // async so that an unreadable file is a rejected promise, not a throw at the call.
  async get(key: string): Promise<string | undefined> {
    return this.read()[key];
  }

  async set(key: string, value: string): Promise<void> {
    rememberSecret(value);
    await this.locked(() => {
      const all = this.read();
      all[key] = value;
      this.write(all);
    });
  }

  async delete(key: string): Promise<void> {
    await this.locked(() => {
      const all = this.read();
      if (!(key in all)) return;
      delete all[key];
      if (Object.keys(all).length) this.write(all);
      else rmSync(this.where, { force: true });
    });
  }

  /** Read-modify-write under a lock: two patchbays writing different secrets at once must not drop each other's. */
  private locked(change: () => void): Promise<void> {
    return withFileLock(`${this.where}.lock`, { staleMs: 10_000, waitMs: 15_000 }, async () => change());
  }
}

/** One OS keychain, driven through its command-line tool. */
interface Keychain {
  readonly name: string;
  lookup(key: string): Promise<string | undefined>;
  store(key: string, value: string): Promise<void>;
  clear(key: string): Promise<void>;
}

function onPath(env: NodeJS.ProcessEnv, exe: string): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) if (dir && existsSync(join(dir, exe))) return join(dir, exe);
  return undefined;
}

function keychainFor(env: NodeJS.ProcessEnv): Keychain | undefined {
  if (process.platform === 'darwin') {
    const security = onPath(env, 'security');
    return security ? macKeychain(security, env) : undefined;
  }
  if (process.platform === 'linux') {
    const tool = onPath(env, 'secret-tool');
    // Without a session bus the Secret Service cannot answer (ssh sessions, containers, CI).
    return tool && env.DBUS_SESSION_BUS_ADDRESS ? secretService(tool, env) : undefined;
  }
  return undefined;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<Run> {
  return new Promise((done, fail) => {
    const child = execFile(cmd, args, { env, timeout: KEYCHAIN_TIMEOUT_MS, encoding: 'utf8', maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return fail(new Error(`${cmd}: ${err.killed ? 'timed out' : err.message}`));
      done({ code: err ? Number(err.code) : 0, stdout, stderr });
    });
    child.stdin?.end(input ?? '');
  });
}

/** libsecret's CLI: the secret goes in on stdin, never in argv where `ps` would show it. */
function secretService(tool: string, env: NodeJS.ProcessEnv): Keychain {
  const attrs = (key: string): string[] => ['service', SERVICE, 'account', key];
  return {
    name: 'Secret Service (secret-tool)',
    async lookup(key) {
      const r = await run(tool, ['lookup', ...attrs(key)], env);
      if (r.code === 0) return r.stdout;
      // `lookup` exits 1 with nothing on stderr when there is no such item.
      if (!r.stderr.trim()) return undefined;
      throw new Error(`secret-tool lookup: ${r.stderr.trim()}`);
    },
    async store(key, value) {
      const r = await run(tool, ['store', `--label=patchbay ${key}`, ...attrs(key)], env, value);
      if (r.code !== 0) throw new Error(`secret-tool store: ${r.stderr.trim() || `exit ${r.code}`}`);
    },
    async clear(key) {
      const r = await run(tool, ['clear', ...attrs(key)], env);
      if (r.code !== 0 && r.stderr.trim()) throw new Error(`secret-tool clear: ${r.stderr.trim()}`);
    },
  };
}

/**
 * macOS's `security`. `-w` takes the password as an argument (the tool has no stdin mode for
 * add-generic-password); it is visible to the user's own processes for the instant the tool runs.
 */
function macKeychain(security: string, env: NodeJS.ProcessEnv): Keychain {
  return {
    name: 'macOS Keychain',
    async lookup(key) {
      const r = await run(security, ['find-generic-password', '-s', SERVICE, '-a', key, '-w'], env);
      if (r.code === 0) return r.stdout.replace(/\n$/, '');
      if (r.code === 44) return undefined; // errSecItemNotFound
      throw new Error(`security find-generic-password: ${r.stderr.trim() || `exit ${r.code}`}`);
    },
    async store(key, value) {
      const r = await run(security, ['add-generic-password', '-U', '-s', SERVICE, '-a', key, '-w', value], env);
      if (r.code !== 0) throw new Error(`security add-generic-password: ${r.stderr.trim() || `exit ${r.code}`}`);
    },
    async clear(key) {
      const r = await run(security, ['delete-generic-password', '-s', SERVICE, '-a', key], env);
      if (r.code !== 0 && r.code !== 44) throw new Error(`security delete-generic-password: ${r.stderr.trim() || `exit ${r.code}`}`);
    },
  };
}

/**
 * The keychain first; when it fails (locked, no daemon, timed out) the file, with one warning.
 * Reads look in both, so a secret stored during an outage is still found; deletes clear both.
 */
class FallbackStore implements SecretStore {
  private failed = false;
  constructor(
    private readonly keychain: Keychain,
    private readonly file: FileSecretStore,
  ) {}

  get kind(): 'keychain' | 'file' {
    return this.failed ? 'file' : 'keychain';
  }
  get where(): string {
    return this.failed ? this.file.where : this.keychain.name;
  }

  private fallBack(e: unknown): void {
    if (!this.failed) log.warn(`The ${this.keychain.name} is not usable (${errorMessage(e)}); secrets go to ${this.file.where} (0600) instead`);
    this.failed = true;
  }

  async get(key: string): Promise<string | undefined> {
    if (!this.failed) {
      try {
        const v = await this.keychain.lookup(key);
        if (v !== undefined) return rememberSecret(v);
      } catch (e) {
        this.fallBack(e);
      }
    }
    return this.file.get(key);
  }

  async set(key: string, value: string): Promise<void> {
    rememberSecret(value);
    if (!this.failed) {
      try {
        await this.keychain.store(key, value);
        // A copy left in the file from an earlier outage would shadow nothing but still leak.
        await this.file.delete(key);
        return;
      } catch (e) {
        this.fallBack(e);
      }
    }
    await this.file.set(key, value);
  }

  async delete(key: string): Promise<void> {
    if (!this.failed) {
      try {
        await this.keychain.clear(key);
      } catch (e) {
        this.fallBack(e);
      }
    }
    await this.file.delete(key);
  }
}
