/**
 * Loading patchbay's config from its layers (ARCHITECTURE.md "The workspace runtime"), later
 * wins, deep-merged (objects key by key; arrays and scalars replace):
 *
 *   built-in defaults < initializationOptions < PATCHBAY_CONFIG (JSON)
 *     < --config-file, else $XDG_CONFIG_HOME/patchbay/config.json (~/.config/…)
 *     < <root>/.patchbay/config.json for each workspace root, in order
 *
 * `pureConfig: true` in initializationOptions keeps only defaults + initializationOptions.
 * `${env:VAR}` / `${env:VAR:default}` are interpolated in every string value first.
 *
 * Files are JSONC (comments, trailing commas). A workspace file's settings that run code or
 * widen approvals apply only once the user trusted that folder (trust.ts, held-back.ts).
 * Unknown keys are reported with a did-you-mean (unknown-keys.ts).
 *
 * Loading never fails: a file that is not JSON is reported and skipped; a value the schema
 * rejects is reported and only that key is dropped; the result is always a valid `Config`.
 */
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Agent } from '../shapes/agent.js';
import { configSchema, type Config } from './schema.js';
import { parseJson } from './json.js';
import { readConfigText } from './config-file.js';
import { parseJsonc } from './jsonc.js';
import { compileFullMatch } from './regex.js';
import { holdBack, type HeldSetting } from './held-back.js';
import { approvedEntries, contentHash, entryHash, trustState, type TrustState } from './trust.js';
import { findUnknownKeys } from './unknown-keys.js';
import { refuseRequestFields } from './payload-fields.js';
import { NO_WORKSPACE_ORIGINS, workspaceOrigins, type WorkspaceOrigins } from './origin.js';

export interface ConfigError {
  /** A file path, or 'initializationOptions', or 'PATCHBAY_CONFIG'. */
  source: string;
  /** Dotted path of the offending key, e.g. `providers.openai.api`; '' for the whole source. */
  key: string;
  message: string;
  /** 'warning' for problems that did not drop anything (e.g. an unset env var). Default 'error'. */
  severity?: 'error' | 'warning';
}

export interface LoadConfigOptions {
  initializationOptions?: unknown;
  /** Workspace folders (paths, or file:// URIs). */
  roots: string[];
  env: NodeJS.ProcessEnv;
  /** Defaults to the OS home directory. */
  homeDir?: string;
  /** The CLI's `--config-file`; replaces the user config file. */
  configFile?: string;
}

export interface LoadConfigResult {
  config: Config;
  errors: ConfigError[];
  /** The layers that contributed, lowest first ('initializationOptions', 'PATCHBAY_CONFIG', file paths). */
  sources: string[];
  /** Each workspace root's `.patchbay/config.json` that loaded, with its trust (see trust.ts). */
  workspaces: WorkspaceConfigTrust[];
  /** Hooks and MCP servers a workspace's own config set or changed (origin.ts): they run sandboxed. */
  fromWorkspace?: WorkspaceOrigins;
}

export interface WorkspaceConfigTrust {
  root: string;
  file: string;
  /** sha256 of the file's content as loaded: what trusting it records. */
  sha256: string;
  state: TrustState;
  /** The settings that need trust (held-back.ts); held back unless `state` is 'trusted'. */
  settings: HeldSetting[];
}

/** Settings an untrusted workspace file asked for and did not get. */
export function heldBack(r: Pick<LoadConfigResult, 'workspaces'>): WorkspaceConfigTrust[] {
  return r.workspaces.filter((w) => w.state !== 'trusted' && w.settings.length > 0);
}

export const INIT_OPTIONS_SOURCE = 'initializationOptions';
export const ENV_SOURCE = 'PATCHBAY_CONFIG';

type Obj = Record<string, unknown>;

function isPlainObject(v: unknown): v is Obj {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Keys that must never be copied onto a plain object. */
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Deep merge: plain objects merge key by key, anything else in `over` replaces. Inputs are not mutated. */
export function deepMerge(base: unknown, over: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(over)) return clone(over);
  const out: Obj = clone(base) as Obj;
  for (const [k, v] of Object.entries(over)) {
    if (UNSAFE_KEYS.has(k)) continue;
    out[k] = k in out ? deepMerge(out[k], v) : clone(v);
  }
  return out;
}

function clone(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(clone);
  if (isPlainObject(v)) {
    const out: Obj = {};
    for (const [k, x] of Object.entries(v)) if (!UNSAFE_KEYS.has(k)) out[k] = clone(x);
    return out;
  }
  return v;
}

/** `a.b[0].c` from a path. */
export function formatKeyPath(path: ReadonlyArray<PropertyKey>): string {
  let s = '';
  for (const seg of path) {
    if (typeof seg === 'number') s += `[${seg}]`;
    else s += s ? `.${String(seg)}` : String(seg);
  }
  return s;
}

export function formatConfigError(e: ConfigError): string {
  const head = e.severity === 'warning' ? 'Config warning in' : 'Invalid config in';
  return `${head} ${e.source}${e.key ? ` at ${e.key}` : ''}: ${e.message}`;
}

export { patchbayHome, userConfigPath } from '../util/locations.js';
import { patchbayHome, userConfigPath } from '../util/locations.js';

/** `<root>/.patchbay/config.json`. */
export function workspaceConfigPath(root: string): string {
  return join(rootPath(root), '.patchbay', 'config.json');
}

function rootPath(root: string): string {
  if (root.startsWith('file:')) {
    try {
      return fileURLToPath(root);
    } catch {
      return root;
    }
  }
  return root;
}

// ---------------------------------------------------------------------------------------------
// env interpolation

const ENV_REF = /\$\{env:([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}/g;

/**
 * Replace `${env:VAR}` / `${env:VAR:default}` in every string value of `value` (recursively).
 * A set variable (even empty) wins; an unset one takes the default, or '' with a warning.
 */
export function interpolateEnv(value: unknown, env: NodeJS.ProcessEnv, source: string, errors: ConfigError[], path: PropertyKey[] = []): unknown {
  if (typeof value === 'string') {
    if (!value.includes('${env:')) return value;
    return value.replace(ENV_REF, (_m, name: string, dflt: string | undefined) => {
      const v = env[name];
      if (v !== undefined) return v;
      if (dflt !== undefined) return dflt;
      errors.push({ source, key: formatKeyPath(path), message: `environment variable ${name} is not set; using an empty string`, severity: 'warning' });
      return '';
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolateEnv(v, env, source, errors, [...path, i]));
  if (isPlainObject(value)) {
    const out: Obj = {};
    for (const [k, v] of Object.entries(value)) {
      if (UNSAFE_KEYS.has(k)) continue;
      out[k] = interpolateEnv(v, env, source, errors, [...path, k]);
    }
    return out;
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// validation of one layer: drop only what the schema rejects

const REMOVED = Symbol('removed');

/** Delete `path` from `root` (array elements are marked, then filtered out by `compact`). */
function deletePath(root: Obj, path: ReadonlyArray<PropertyKey>): void {
  let cur: unknown = root;
  for (let i = 0; i < path.length - 1; i++) {
    if (cur === null || typeof cur !== 'object') return;
    cur = (cur as Record<PropertyKey, unknown>)[path[i] as PropertyKey];
  }
  if (cur === null || typeof cur !== 'object') return;
  const last = path[path.length - 1] as PropertyKey;
  // A required key that is missing: the entry lacking it goes (e.g. a hook without `actions`),
  // or the next round would find the same issue and the whole layer would be dropped.
  if (!(last in cur) && path.length > 1) return deletePath(root, path.slice(0, -1));
  if (Array.isArray(cur) && typeof last === 'number') cur[last] = REMOVED;
  else delete (cur as Record<PropertyKey, unknown>)[last];
}

function compact(v: unknown): unknown {
  if (Array.isArray(v)) return v.filter((x) => x !== REMOVED).map(compact);
  if (isPlainObject(v)) {
    for (const k of Object.keys(v)) v[k] = compact(v[k]);
    return v;
  }
  return v;
}

/**
 * Validate one layer against the schema; report every issue and delete the offending keys.
 * Returns the cleaned raw layer (without defaults applied), or undefined if nothing survived.
 */
function cleanLayer(layer: Obj, source: string, errors: ConfigError[]): Obj | undefined {
  let current = layer;
  for (let round = 0; round < 10; round++) {
    const r = configSchema.safeParse(current);
    if (r.success) return current;
    for (const issue of r.error.issues) {
      if (issue.path.length === 0) {
        errors.push({ source, key: '', message: issue.message });
        return undefined;
      }
      errors.push({ source, key: formatKeyPath(issue.path), message: issue.message });
    }
    for (const issue of r.error.issues) deletePath(current, issue.path);
    current = compact(current) as Obj;
  }
  errors.push({ source, key: '', message: 'could not be validated; ignored' });
  return undefined;
}

/** Report argsMatchers regexes that do not compile (they are kept, and never match). */
function checkApprovalRegexes(layer: Obj, source: string, errors: ConfigError[]): void {
  const approval = (layer.toolCall as Obj | undefined)?.approval as Obj | undefined;
  if (!isPlainObject(approval)) return;
  for (const kind of ['allow', 'ask', 'deny']) {
    const rules = approval[kind];
    if (!isPlainObject(rules)) continue;
    for (const [selector, rule] of Object.entries(rules)) {
      const matchers = isPlainObject(rule) ? rule.argsMatchers : undefined;
      if (!isPlainObject(matchers)) continue;
      for (const [arg, patterns] of Object.entries(matchers)) {
        if (!Array.isArray(patterns)) continue;
        patterns.forEach((p, i) => {
          if (typeof p !== 'string') return;
          const c = compileFullMatch(p);
          if (!c.ok) {
            errors.push({
              source,
              key: formatKeyPath(['toolCall', 'approval', kind, selector, 'argsMatchers', arg, i]),
              message: `${c.error} (this matcher never matches)`,
            });
          }
        });
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// initializationOptions specifics

const LEGACY_AGENT_KEYS = ['chatAgent', 'chatBehavior'] as const;
const LEGACY_AGENTS: Record<string, Agent> = { agent: 'code', code: 'code', plan: 'plan' };

/** Map ECA's legacy `chatAgent`/`chatBehavior` to `chat.defaultAgent`; drop `pureConfig`. */
function normalizeInitOptions(opts: Obj, errors: ConfigError[]): Obj {
  const out = clone(opts) as Obj;
  delete out.pureConfig;
  let legacy: Agent | undefined;
  for (const key of LEGACY_AGENT_KEYS) {
    if (!(key in out)) continue;
    const v = out[key];
    delete out[key];
    if (legacy) continue; // chatAgent (newer) wins over chatBehavior
    const mapped = typeof v === 'string' ? LEGACY_AGENTS[v] : undefined;
    if (mapped) legacy = mapped;
    else errors.push({ source: INIT_OPTIONS_SOURCE, key, message: `unknown agent ${JSON.stringify(v)}; expected "agent" or "plan"` });
  }
  if (legacy) {
    const chat = isPlainObject(out.chat) ? out.chat : {};
    // An explicit chat.defaultAgent wins over the legacy keys.
    if (chat.defaultAgent === undefined) out.chat = { ...chat, defaultAgent: legacy };
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

function readConfigFile(path: string, mustExist: boolean, errors: ConfigError[]): { value: unknown; text: string } | undefined {
  const read = readConfigText(path);
  if (read.kind === 'missing') {
    if (mustExist) errors.push({ source: path, key: '', message: 'file not found' });
    return undefined;
  }
  if (read.kind === 'refused') {
    errors.push({ source: path, key: '', message: read.message });
    return undefined;
  }
  const { text } = read;
  if (text.trim() === '') return { value: {}, text }; // an empty file is an empty config
  const parsed = parseJsonc(text);
  if (!parsed.ok) {
    errors.push({ source: path, key: '', message: `${parsed.message}; file ignored` });
    return undefined;
  }
  return { value: parsed.value, text };
}

/**
 * An `mcpServers` entry the user added or changed from the editor in a folder not trusted as a
 * whole (trust.ts `approveEntry`) runs while it is as they wrote it; the rest stays held back.
 */
function keepApproved(layer: Obj, r: { kept: Obj; held: HeldSetting[] }, approved: Record<string, string>): { kept: Obj; held: HeldSetting[] } {
  const servers = layer.mcpServers;
  if (!Object.keys(approved).length || !isPlainObject(servers)) return r;
  const back: Obj = {};
  const held = r.held.filter((h) => {
    const [top, name, ...rest] = h.path;
    const ok = top === 'mcpServers' && name !== undefined && !rest.length && Object.hasOwn(servers, name) && approved[name] === entryHash(servers[name]);
    if (ok) back[name] = servers[name];
    return !ok;
  });
  if (!Object.keys(back).length) return r;
  const kept = { ...r.kept, mcpServers: { ...(isPlainObject(r.kept.mcpServers) ? r.kept.mcpServers : {}), ...back } };
  return { kept, held };
}

/** Load and merge every layer. Never throws. */
export function loadConfig(opts: LoadConfigOptions): LoadConfigResult {
  const errors: ConfigError[] = [];
  const sources: string[] = [];
  const env = opts.env ?? {};
  const layers: Array<{ source: string; value: unknown; root?: string; text?: string }> = [];
  const workspaces: WorkspaceConfigTrust[] = [];
  const home = patchbayHome(env, opts.homeDir);

  const init = opts.initializationOptions;
  const pure = isPlainObject(init) && init.pureConfig === true;
  if (init !== undefined && init !== null) {
    if (isPlainObject(init)) layers.push({ source: INIT_OPTIONS_SOURCE, value: normalizeInitOptions(init, errors) });
    else errors.push({ source: INIT_OPTIONS_SOURCE, key: '', message: 'expected a JSON object; ignored' });
  }

  if (!pure) {
    const envJson = env[ENV_SOURCE];
    if (envJson !== undefined && envJson.trim() !== '') {
      const parsed = parseJson(envJson);
      if (parsed.ok) layers.push({ source: ENV_SOURCE, value: parsed.value });
      else errors.push({ source: ENV_SOURCE, key: '', message: `${parsed.message}; ignored` });
    }

    const seen = new Set<string>();
    const files: Array<{ path: string; mustExist: boolean; root?: string }> = [];
    const addFile = (path: string, mustExist: boolean, root?: string): void => {
      const abs = resolve(path);
      if (seen.has(abs)) return;
      seen.add(abs);
      files.push({ path: abs, mustExist, root });
    };
    if (opts.configFile) addFile(opts.configFile, true);
    else addFile(userConfigPath(env, opts.homeDir), false);
    for (const root of opts.roots ?? []) addFile(workspaceConfigPath(root), false, rootPath(root));
    for (const f of files) {
      const read = readConfigFile(f.path, f.mustExist, errors);
      if (read !== undefined) layers.push({ source: f.path, value: read.value, root: f.root, text: read.text });
    }
  }

  let merged: Obj = {};
  // The user's layers merged, before the first workspace file (those come last).
  let userOnly: Obj | undefined;
  for (const layer of layers) {
    const { source } = layer;
    if (layer.root !== undefined) userOnly ??= merged;
    let value = layer.value;
    if (!isPlainObject(value)) {
      errors.push({ source, key: '', message: 'expected a JSON object; ignored' });
      continue;
    }
    // Reporting is advice: it must never cost the user the config it reports on.
    try {
      for (const u of findUnknownKeys(value)) errors.push({ source, key: formatKeyPath(u.path), message: u.message, severity: u.severity });
    } catch (e) {
      errors.push({ source, key: '', message: `could not check for unknown keys: ${(e as Error).message}`, severity: 'warning' });
    }
    if (layer.root !== undefined) {
      // Only a workspace file can be untrusted: every other layer is the user's own.
      const sha256 = contentHash(layer.text ?? '');
      const state = trustState(home, layer.root, sha256);
      const all = holdBack(value, merged, layer.root);
      const { kept, held } = state === 'trusted' ? all : keepApproved(value, all, approvedEntries(home, layer.root));
      workspaces.push({ root: layer.root, file: source, sha256, state, settings: held });
      if (state !== 'trusted') value = kept;
    }
    const interpolated = interpolateEnv(value, env, source, errors) as Obj;
    const clean = cleanLayer(interpolated, source, errors);
    if (!clean) continue;
    checkApprovalRegexes(clean, source, errors);
    refuseRequestFields(clean, source, errors);
    merged = deepMerge(merged, clean) as Obj;
    sources.push(source);
  }

  // Each layer is valid alone, so the merge is too; stay safe if that ever stops being true.
  let final = configSchema.safeParse(merged);
  if (!final.success) {
    const clean = cleanLayer(merged, 'merged config', errors);
    final = configSchema.safeParse(clean ?? {});
  }
  const config = final.success ? final.data : configSchema.parse({});
  return { config, errors, sources, workspaces, fromWorkspace: userOnly ? workspaceOrigins(userOnly, merged) : NO_WORKSPACE_ORIGINS };
}
