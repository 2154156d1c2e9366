/**
 * What an untrusted workspace config (`<root>/.patchbay/config.json`, see trust.ts) may not do.
 * This is the one list (with each peer's own rule, `trustRule` in src/peers/<peer>/settings.ts);
 * everything not in it applies from an untrusted folder too:
 *
 * - `mcpServers.*`: every entry (a command runs code; a URL receives your prompts and files).
 * - `languageServers.*` entries that set how a server starts: `command`, `args`, `env` (e.g.
 *   NODE_OPTIONS) or `initializationOptions` (e.g. a tsserver path); `disabled`, `extensions`,
 *   `languageIds` and `rootMarkers` still apply.
 * - `toolCall.approval.byDefault` when less strict than what the lower layers give
 *   (allow < unset (read-only tools run) < ask < deny).
 * - `chat.defaultTrust: true` (new chats would approve every call that asks).
 * - `agent.<name>.toolCall.approval.allow.*`, `.tools.allow.*`, a flat `.tools` list and a
 *   `byDefault: "allow"` in either: a subagent's approvals must not widen the user's.
 * - `toolCall.approval.insideWorkspace`: folders the tools would then read and write unasked.
 * - `toolCall.approval.allow.*`: every rule. `ask` and `deny` rules only narrow, so they apply,
 *   except one that would replace a lower layer's rule for the same selector (its argsMatchers
 *   could make that rule match less).
 * - `disabledTools` when it drops a tool a lower layer disabled (arrays replace on merge).
 * - `providers.*.url`, `.key`, `.keyEnv`, `.login`: a repository must not point your key at its
 *   server, nor send your login (and its tokens) to an authorization server of its choosing;
 *   `providers.*.models.*.model`: a local model file or URL to download and load;
 *   `.modelName`: the model your key pays for, hidden behind the name the editor shows;
 *   `.extraPayload` and each non-empty `.variants.*`: fields merged over the request body
 *   (instructions, tools such as a hosted MCP server, `store`…; load.ts refuses the worst of them
 *   from any layer, this holds back the rest). `api`, `limit`, `cost`, `imageInput` and the local
 *   runner's sizes stay: they cannot send a request elsewhere or add to what it says.
 * - `openctx.providers.*` (JS modules run code; URLs receive content) and
 *   `openctx.host.providers.*` (modules run in patchbay), `openctx.host.enabled: true`.
 * - `gateway.host` (binding beyond loopback exposes your tools) and `gateway.enabled: true`.
 * - `remote.enabled`, `remote.password` and `remote.port`: a repository must not open a control
 *   API over your chats, nor choose the password that opens it.
 * - `completion.systemPrompt` and `rewrite.systemPrompt`: inline completion and rewrite put the
 *   model's answer straight into the user's files; a repository must not write their instructions.
 * - `hooks` and `customTools` (ECA keys that run commands; patchbay ignores them today, and an
 *   untrusted folder must not gain them the day it does not).
 * - `rules`, `skills` and `commands` entries whose `path` leads outside the workspace folder
 *   (absolute elsewhere, `~/…`, or climbing with `..`): the files inside the workspace are text and
 *   load anyway, but a repository must not have your other files read into its prompts. Likewise
 *   `includeParentAgentsFiles: true` (AGENTS.md of every folder above it).
 * - `memory.enabled` and `memory.writeMode`: a repository must not turn on (or off) a memory
 *   that is the user's own, nor let the model write it without asking (core/memory/). Likewise
 *   `prompts.memoryConsolidate`: the instructions the model follows to rewrite and delete it.
 * - `sandbox.enabled` other than `true`, `sandbox.network: true`, `sandbox.writable` and
 *   `sandbox.autoAllow: true`: a repository must not widen the sandbox its own commands run in;
 *   likewise a `sandbox.hidden` that leaves out a path a lower layer hid (arrays replace).
 * - Any other value that reads the environment (`${env:…}`): a file from a repository must not
 *   copy your secrets into a prompt or a message.
 *
 * It works on the file as written (before `${env:…}` is filled in), so what it reports never
 * contains a secret taken from the environment.
 */
import { isAbsolute, relative, resolve } from 'node:path';
import { escapeControlChars, shorten } from '../util/text.js';
import { scrubUrls } from '../util/url.js';
import { PEERS } from '../peers/index.js';

export interface HeldSetting {
  /** The key as written, e.g. `['providers', 'my.prov', 'url']`: what code acts on. */
  path: string[];
  /**
   * The key as shown, from `path`: dotted where a name is plain (`mcpServers.evil`), JSON-quoted
   * where it is not (`providers["my.prov"].url`), control characters escaped (`"a\u001b[2K"`).
   */
  key: string;
  /** What it would do, whole (e.g. `runs "sh -c touch /tmp/x"`); '' when the key says it all. Not yet escaped: see formatHeldSetting. */
  detail: string;
}

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const get = (o: unknown, ...path: string[]): unknown => path.reduce<unknown>((cur, k) => (isObj(cur) ? cur[k] : undefined), o);

/** A plain name, shown dotted; anything else is shown JSON-quoted. */
const PLAIN_NAME = /^[A-Za-z0-9_$@/-]+$/;

/** The key as shown (see HeldSetting.key). */
export function displayKey(path: string[]): string {
  return path.map((k, i) => (PLAIN_NAME.test(k) ? `${i ? '.' : ''}${k}` : `[${escapeControlChars(JSON.stringify(k))}]`)).join('');
}

function commandLine(entry: unknown): string {
  const command = get(entry, 'command');
  const args = get(entry, 'args');
  const parts = [typeof command === 'string' ? command : '', ...(Array.isArray(args) ? args.filter((a): a is string => typeof a === 'string') : [])];
  return parts.join(' ').trim();
}

function describeServer(entry: unknown): string {
  if (typeof get(entry, 'command') === 'string') return `runs "${commandLine(entry)}"`;
  const url = get(entry, 'url');
  if (typeof url === 'string') return `connects to ${url}`;
  return '';
}

const STRICTNESS: Record<string, number> = { allow: 0, unset: 1, ask: 2, deny: 3 };

/**
 * `held` and a copy of `layer` without them. `lower` is the merged config of the layers below;
 * `root` is the workspace folder the file belongs to.
 */
export function holdBack(layer: Obj, lower: Obj, root?: string): { kept: Obj; held: HeldSetting[] } {
  const kept = structuredClone(layer);
  const held: HeldSetting[] = [];
  const hold = (path: string[], detail = ''): void => {
    held.push({ path, key: displayKey(path), detail });
    const parent = path.slice(0, -1).reduce<unknown>((cur, k) => (isObj(cur) ? cur[k] : undefined), kept);
    if (isObj(parent)) delete parent[path[path.length - 1]];
  };
  const entries = (...path: string[]): Array<[string, unknown]> => {
    const v = get(layer, ...path);
    return isObj(v) ? Object.entries(v) : [];
  };

  // Each peer's own settings (src/peers/<peer>/settings.ts `trustRule`).
  for (const peer of PEERS) peer.trustRule?.({ layer, lower, get, entries, hold, describeServer });

  const byDefault = get(layer, 'toolCall', 'approval', 'byDefault');
  const lowerDefault = get(lower, 'toolCall', 'approval', 'byDefault');
  if (typeof byDefault === 'string' && byDefault in STRICTNESS) {
    const below = STRICTNESS[typeof lowerDefault === 'string' && lowerDefault in STRICTNESS ? lowerDefault : 'unset'];
    if (STRICTNESS[byDefault] < below) hold(['toolCall', 'approval', 'byDefault'], JSON.stringify(byDefault));
  }
  for (const [selector] of entries('toolCall', 'approval', 'allow')) hold(['toolCall', 'approval', 'allow', selector], 'auto-approves it');
  // Folders the tools would go into unasked: the repository must not widen its own containment.
  const inside = get(layer, 'toolCall', 'approval', 'insideWorkspace');
  if (inside !== undefined) hold(['toolCall', 'approval', 'insideWorkspace'], Array.isArray(inside) ? `treats ${inside.map((f) => JSON.stringify(f)).join(', ')} as inside the workspace` : '');
  // A subagent's own approvals (`agent.<name>.toolCall.approval`, or `.tools` as in its Markdown
  // file) must not widen the user's either: its allow rules and a `byDefault: "allow"` are held.
  for (const [name] of entries('agent')) {
    if (Array.isArray(get(layer, 'agent', name, 'tools'))) hold(['agent', name, 'tools'], 'auto-approves the tools it lists');
    for (const at of [['toolCall', 'approval'], ['tools']]) {
      if (get(layer, 'agent', name, ...at, 'byDefault') === 'allow') hold(['agent', name, ...at, 'byDefault'], '"allow"');
      // A list of tool names, as in an agent's Markdown front-matter: held whole.
      if (Array.isArray(get(layer, 'agent', name, ...at, 'allow'))) hold(['agent', name, ...at, 'allow'], 'auto-approves the tools it lists');
      for (const [selector] of entries('agent', name, ...at, 'allow')) hold(['agent', name, ...at, 'allow', selector], 'auto-approves it');
    }
  }
  // Trust mode by default approves every call that would ask.
  if (get(layer, 'chat', 'defaultTrust') === true && get(lower, 'chat', 'defaultTrust') !== true) hold(['chat', 'defaultTrust'], 'true');
  for (const kind of ['ask', 'deny']) {
    const lowerRules = get(lower, 'toolCall', 'approval', kind);
    for (const [selector, rule] of entries('toolCall', 'approval', kind)) {
      const before = isObj(lowerRules) ? lowerRules[selector] : undefined;
      if (before !== undefined && JSON.stringify(before) !== JSON.stringify(rule)) hold(['toolCall', 'approval', kind, selector], 'replaces your own rule');
    }
  }

  const disabled = get(layer, 'disabledTools');
  const lowerDisabled = get(lower, 'disabledTools');
  if (Array.isArray(disabled) && Array.isArray(lowerDisabled)) {
    const enabled = lowerDisabled.filter((t) => !disabled.includes(t));
    if (enabled.length) hold(['disabledTools'], `re-enables ${enabled.map((t) => JSON.stringify(t)).join(', ')}`);
  }

  for (const [name, provider] of entries('providers')) {
    for (const key of ['url', 'key', 'keyEnv', 'login']) {
      const v = get(provider, key);
      if (v === undefined) continue;
      hold(
        ['providers', name, key],
        key === 'url' && typeof v === 'string' ? `sends prompts to ${v}` : key === 'key' ? 'sets an API key' : key === 'login' ? 'sets where you log in (and where tokens go)' : '',
      );
    }
    for (const [model, entry] of entries('providers', name, 'models')) {
      const at = ['providers', name, 'models', model];
      const file = get(entry, 'model');
      if (file !== undefined) hold([...at, 'model'], typeof file === 'string' ? `loads ${file}` : '');
      // The model the request names, paid for with your key, behind the name the editor shows.
      const modelName = get(entry, 'modelName');
      if (modelName !== undefined) hold([...at, 'modelName'], typeof modelName === 'string' ? JSON.stringify(modelName) : '');
      // Fields merged over the request body: they could set its instructions, tools or storage.
      if (get(entry, 'extraPayload') !== undefined) hold([...at, 'extraPayload'], requestFields(get(entry, 'extraPayload')));
      // Each variant likewise (`default` on every request); `{}` only removes a built-in one.
      for (const [variant, payload] of entries(...at, 'variants')) {
        if (!isObj(payload) || Object.keys(payload).length) hold([...at, 'variants', variant], requestFields(payload));
      }
    }
  }

  // The instructions of the two features whose answer lands straight in the user's files.
  for (const feature of ['completion', 'rewrite']) if (get(layer, feature, 'systemPrompt') !== undefined) hold([feature, 'systemPrompt'], 'replaces the instructions of code written into your files');
  for (const key of ['hooks', 'customTools']) if (get(layer, key) !== undefined) hold([key]);
  for (const key of ['enabled', 'password', 'port']) if (get(layer, 'remote', key) !== undefined) hold(['remote', key], key === 'password' ? '' : JSON.stringify(get(layer, 'remote', key)));
  // The sandbox: turning it on, hiding more, asking more only narrow; the rest widens it.
  const sb = get(layer, 'sandbox', 'enabled');
  if (sb !== undefined && sb !== true) hold(['sandbox', 'enabled'], JSON.stringify(sb));
  if (get(layer, 'sandbox', 'network') === true) hold(['sandbox', 'network'], 'gives commands the network');
  if (get(layer, 'sandbox', 'writable') !== undefined) hold(['sandbox', 'writable'], JSON.stringify(get(layer, 'sandbox', 'writable')));
  if (get(layer, 'sandbox', 'autoAllow') === true) hold(['sandbox', 'autoAllow'], 'runs sandboxed commands without asking');
  // Arrays replace on merge: a `hidden` list that leaves out one of the user's would show it again.
  const hidden = get(layer, 'sandbox', 'hidden');
  const lowerHidden = get(lower, 'sandbox', 'hidden');
  if (hidden !== undefined && Array.isArray(lowerHidden)) {
    const shown = lowerHidden.filter((h) => !Array.isArray(hidden) || !hidden.includes(h));
    if (shown.length) hold(['sandbox', 'hidden'], `shows ${shown.map((h) => JSON.stringify(h)).join(', ')} again`);
  }
  for (const key of ['enabled', 'writeMode']) if (get(layer, 'memory', key) !== undefined) hold(['memory', key], JSON.stringify(get(layer, 'memory', key)));
  if (get(layer, 'prompts', 'memoryConsolidate') !== undefined) hold(['prompts', 'memoryConsolidate'], 'replaces the instructions for editing your memory files');
  for (const key of ['rules', 'skills', 'commands']) holdOutsidePaths(layer, kept, key, root, hold);
  // AGENTS.md of every folder above the repository: the user's files, not the repository's.
  if (get(layer, 'includeParentAgentsFiles') === true) hold(['includeParentAgentsFiles'], 'true');
  for (const [path, name] of envReads(kept, [])) hold(path, `reads $${name}`);
  return { kept, held };
}

/** Holds each `key: [{path}]` entry leading outside `root` (without a root: every path that is not plainly inside). */
function holdOutsidePaths(layer: Obj, kept: Obj, key: string, root: string | undefined, hold: (path: string[], detail?: string) => void): void {
  const list = layer[key];
  if (!Array.isArray(list)) return;
  const out = new Set<number>();
  list.forEach((entry, i) => {
    const p = get(entry, 'path');
    if (typeof p !== 'string' || !leadsOutside(p.trim(), root)) return;
    hold([key, String(i)], `reads ${key} from ${p}`);
    out.add(i);
  });
  // `hold` removes object keys only: drop the held items here, the rest stays a list.
  const left = kept[key];
  if (out.size && Array.isArray(left)) kept[key] = left.filter((_, i) => !out.has(i));
}

function leadsOutside(p: string, root: string | undefined): boolean {
  if (p === '~' || p.startsWith('~/')) return true;
  if (root === undefined) return isAbsolute(p) || p.split(/[\\/]/).includes('..');
  const rel = relative(root, resolve(root, p));
  return rel === '..' || rel.startsWith('../') || rel.startsWith('..\\') || isAbsolute(rel);
}

/** `sets request fields a, b`: what a payload would add to a request. */
function requestFields(payload: unknown): string {
  return isObj(payload) ? `sets request fields ${Object.keys(payload).join(', ')}` : '';
}

/** The string values (object keys only; arrays are held whole) that name `${env:VAR}`. */
function envReads(value: unknown, path: string[]): Array<[string[], string]> {
  if (typeof value === 'string') {
    const m = /\$\{env:([A-Za-z_][A-Za-z0-9_]*)/.exec(value);
    return m ? [[path, m[1]]] : [];
  }
  if (Array.isArray(value)) {
    const name = value.flatMap((v) => envReads(v, [])).map(([, n]) => n)[0];
    return name ? [[path, name]] : [];
  }
  if (isObj(value)) return Object.entries(value).flatMap(([k, v]) => envReads(v, [...path, k]));
  return [];
}

/**
 * `mcpServers.evil (runs "sh -c …")`, `toolCall.approval.byDefault: "allow"`. Control characters
 * are shown escaped, never sent to the terminal. The detail is whole unless `maxDetail` is given
 * (messages and logs, never where the user is asked to trust): then a cut says how much it cut.
 */
export function formatHeldSetting(h: HeldSetting, opts: { maxDetail?: number } = {}): string {
  // Keys and values may hold URLs with tokens in their query (`openctx.providers["https://…?token=…"]`).
  const key = scrubUrls(h.key);
  if (!h.detail) return key;
  const scrubbed = escapeControlChars(scrubUrls(h.detail));
  const detail = opts.maxDetail === undefined ? scrubbed : shorten(scrubbed, opts.maxDetail);
  return /^["\d]|^true$|^false$/.test(detail) ? `${key}: ${detail}` : `${key} (${detail})`;
}

/** The list a user is asked to trust: one setting a line, each whole. */
export function heldSettingsList(settings: HeldSetting[]): string {
  return settings.map((s) => `  - ${formatHeldSetting(s)}`).join('\n');
}

/** The warning for one workspace file whose settings were held back (editor, log, doctor, CLI). */
export function heldBackMessage(w: { root: string; file: string; state: string; settings: HeldSetting[] }): string {
  const why = w.state === 'changed' ? 'changed since you trusted this folder' : 'is in a folder you have not trusted';
  const root = escapeControlChars(w.root);
  return (
    `${escapeControlChars(w.file)} ${why}, so patchbay held back: ${w.settings.map((h) => formatHeldSetting(h, { maxDetail: 80 })).join(', ')}. ` +
    `The rest of the file applies. If you trust this folder, run /trust in a chat or \`patchbay trust ${root}\`.`
  );
}
