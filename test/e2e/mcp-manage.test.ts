/**
 * The MCP panel's management methods over the built server's stdio, sent as the plugins send
 * them: eca-webview `src/protocol.ts` `McpAddServerRequest` / `src/redux/thunks/mcp.ts`
 * (`addServer`, `updateServer`, `removeServer`, `enableServer`, `disableServer`), eca-desktop
 * `src/main/router.ts` (forwards only the fields given), eca-emacs `eca-mcp.el`
 * `eca-mcp--submit-add-server` (`scope`, `workspaceUri` of the first folder) and
 * `eca-mcp--submit-remove-server`. Results and order as ECA's `src/eca/handlers.clj`
 * (`mcp-add-server`, `mcp-remove-server`) and `src/eca/features/tools/mcp.clj` (`add-server!`,
 * `update-server!`, `remove-server!`, `disable-server!`, `enable-server!`).
 */
import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ECA, EcaProc, runPatchbay, tempDir, useEcaProcs, workspace, type Msg } from './harness.js';
import { parseJsonc } from '../../src/config/jsonc.js';

const NOTES = resolve(import.meta.dirname, '../fixtures/mcp-notes.mjs');
const track = useEcaProcs();

const userConfig = (home: string) => join(home, '.config', 'patchbay', 'config.json');
const serverEntry = (extra: string[] = []) => ({ command: process.execPath, args: [NOTES, ...extra] });

/** A user config file with comments, odd spacing and a server `keep` that no change may touch. */
const HEAD = `// my patchbay settings
{
    "logLevel": "info", // keep this comment
    "mcpServers": {
        // the server I always use
        "keep": ${JSON.stringify(serverEntry())}`;
const TAIL = `
    },
    /* trailing block comment */
    "chat": { "generateTitles": false }
}
`;

function boot(home: string, root = workspace({ 'a.txt': 'a' }), opts: { config?: Record<string, unknown>; args?: string[] } = {}) {
  const p = track(new EcaProc({ home, config: opts.config ?? {}, ...(opts.args ? { args: opts.args } : {}) }));
  return { p, ready: p.initialize(root) };
}

const updates = (p: EcaProc, name: string, from = 0): Msg[] => p.messages.slice(from).filter((m) => m.method === ECA.toolServerUpdated.method && m.params.name === name);
const statuses = (p: EcaProc, name: string, from = 0): string[] => updates(p, name, from).map((m) => m.params.status);
const status = (p: EcaProc, name: string, s: string, from = 0, timeoutMs = 20_000) =>
  p.waitFor((m) => m.method === ECA.toolServerUpdated.method && m.params.name === name && m.params.status === s, `${name} ${s}`, timeoutMs, from);
const removed = (p: EcaProc, name: string, from = 0) => p.waitFor((m) => m.method === ECA.toolServerRemoved.method && m.params.name === name, `${name} removed`, 20_000, from);
const servers = (file: string): Record<string, any> => {
  const r = parseJsonc(readFileSync(file, 'utf8'));
  if (!r.ok) throw new Error(r.message);
  return (r.value as any).mcpServers;
};

describe('mcp/addServer, updateServer, disable/enable, removeServer', () => {
  it('each change lands in the user config file with its comments and layout kept, and the server follows', async () => {
    const home = tempDir();
    const file = userConfig(home);
    mkdirSync(join(home, '.config', 'patchbay'), { recursive: true });
    const original = `${HEAD}${TAIL}`;
    writeFileSync(file, original, { mode: 0o640 });
    const { p, ready } = boot(home);
    await ready;
    await status(p, 'keep', 'running');

    // eca-desktop router.ts 'mcp/addServer': name, command, args, scope as given.
    let mark = p.messages.length;
    const add = await p.request(ECA.mcpAddServer, { name: 'extra', command: process.execPath, args: [NOTES], scope: 'global' });
    expect(add.result.error).toBeUndefined();
    expect(add.result.server).toMatchObject({ type: 'mcp', name: 'extra', status: 'starting', command: process.execPath, args: [NOTES], disabled: false });
    await status(p, 'extra', 'running', mark);
    let text = readFileSync(file, 'utf8');
    // Everything before and after the new entry is byte for byte what the user wrote.
    expect(text.startsWith(HEAD)).toBe(true);
    expect(text.endsWith(TAIL)).toBe(true);
    expect(servers(file).extra).toEqual({ command: process.execPath, args: [NOTES] });
    // 4-space indentation, as the file has it; `keep` stays on its one line.
    expect(text).toContain(`${HEAD},\n        "extra": {\n            "command"`);
    // The mode stays (the temp file + rename kept it).
    expect(statSync(file).mode & 0o777).toBe(0o640);

    // eca-webview MCPsTab: updateServer({ name, command, args }) → restarted with the new args.
    mark = p.messages.length;
    const upd = await p.request(ECA.mcpUpdateServer, { name: 'extra', command: process.execPath, args: [NOTES, '--delay-ms', '1'] });
    expect(upd.result).toEqual({});
    await status(p, 'extra', 'running', mark);
    // Our own write is applied once: the watcher (150 ms debounce), seeing the same file, restarts nothing more.
    await new Promise((r) => setTimeout(r, 600));
    expect(statuses(p, 'extra', mark)).toEqual(['stopped', 'starting', 'running']);
    expect(updates(p, 'extra', mark).at(-1)!.params.args).toEqual([NOTES, '--delay-ms', '1']);
    text = readFileSync(file, 'utf8');
    expect(text.startsWith(HEAD)).toBe(true);
    expect(text.endsWith(TAIL)).toBe(true);
    expect(servers(file).extra.args).toEqual([NOTES, '--delay-ms', '1']);

    // eca-emacs eca-mcp.el "disable" button: mcp/disableServer → stopped, then disabled; persisted.
    mark = p.messages.length;
    p.notify(ECA.mcpDisableServer, { name: 'extra' });
    const disabled = await status(p, 'extra', 'disabled', mark);
    expect(disabled.params.disabled).toBe(true);
    await new Promise((r) => setTimeout(r, 600));
    expect(statuses(p, 'extra', mark)).toEqual(['stopped', 'disabled']);
    expect(servers(file).extra.disabled).toBe(true);
    expect(readFileSync(file, 'utf8').startsWith(HEAD)).toBe(true);

    // "enable": the flag is removed from the file and the server starts.
    mark = p.messages.length;
    p.notify(ECA.mcpEnableServer, { name: 'extra' });
    await status(p, 'extra', 'running', mark);
    expect(servers(file).extra).not.toHaveProperty('disabled');
    expect(updates(p, 'extra', mark).at(-1)!.params.disabled).toBe(false);

    // eca-emacs eca-mcp--submit-remove-server: stopped, tool/serverRemoved, then the answer (ECA's order).
    mark = p.messages.length;
    const rm = await p.request(ECA.mcpRemoveServer, { name: 'extra' });
    expect(rm.result).toEqual({ name: 'extra', removed: true });
    const gone = await removed(p, 'extra', mark);
    expect(p.messages.indexOf(gone)).toBeLessThan(p.messages.indexOf(rm));
    expect(statuses(p, 'extra', mark)).toEqual(['stopped']);
    // Added, changed, disabled, enabled and removed: the file is again exactly what the user wrote.
    expect(readFileSync(file, 'utf8')).toBe(original);

    // Through all of it, `keep` started once and was never touched.
    expect(statuses(p, 'keep')).toEqual(['starting', 'running']);
  });

  // ECA mcp.clj `enable-server!` always starts the server (`start-server!`), whatever stopped it;
  // `remove-server!` answers `{name, removed}` only once the server is gone.
  it('enable starts a server that was only stopped; a change the reload refuses answers an error, and applies once the file is fixed', async () => {
    const home = tempDir();
    mkdirSync(join(home, '.config', 'patchbay'), { recursive: true });
    writeFileSync(userConfig(home), JSON.stringify({ mcpServers: { s: serverEntry() } }, null, 2));
    const root = workspace({ '.patchbay/config.json': '{ "mcpServers": ' });
    const { p, ready } = boot(home, root);
    await ready;
    await status(p, 's', 'running');
    let mark = p.messages.length;
    p.notify(ECA.mcpStopServer, { name: 's' });
    await status(p, 's', 'stopped', mark);
    mark = p.messages.length;
    p.notify(ECA.mcpEnableServer, { name: 's' });
    await status(p, 's', 'running', mark);

    // The workspace file is not JSON: patchbay keeps its config, so the removal is not done yet.
    mark = p.messages.length;
    const rm = await p.request(ECA.mcpRemoveServer, { name: 's' });
    expect(rm.result.error?.message).toMatch(/was changed, but patchbay keeps the config it had: Invalid config in .*\.patchbay\/config\.json/);
    expect(statuses(p, 's', mark)).toEqual([]);
    writeFileSync(join(root, '.patchbay', 'config.json'), '{}');
    await removed(p, 's', mark);
  });

  // ECA mcp.clj `resolve-target-config-file` (:workspace → that root's config) and `add-server!` with `:disabled true`.
  it('a remote server added with scope workspace goes to that root’s .patchbay/config.json, created on demand', async () => {
    const home = tempDir();
    const root = workspace({ 'a.txt': 'a' });
    const { p, ready } = boot(home, root);
    await ready;
    const url = 'http://127.0.0.1:9/mcp';
    // eca-emacs: `:scope "workspace"` with the first folder's URI.
    const add = await p.request(ECA.mcpAddServer, { name: 'remote', url, headers: { 'X-Team': 'a' }, disabled: true, scope: 'workspace', workspaceUri: pathToFileURL(root).href });
    expect(add.result.server).toMatchObject({ name: 'remote', status: 'disabled', disabled: true, url });
    const file = join(root, '.patchbay', 'config.json');
    expect(servers(file)).toEqual({ remote: { url, headers: { 'X-Team': 'a' }, disabled: true } });
    expect(existsSync(userConfig(home))).toBe(false);
    // eca-webview MCPsTab: a remote server edited into a local one (`updateServer({ name, command, args })`):
    // the URL and headers go, as in ECA's update-server!; it stays disabled.
    const mark = p.messages.length;
    expect((await p.request(ECA.mcpUpdateServer, { name: 'remote', ...serverEntry() })).result).toEqual({});
    expect(servers(file)).toEqual({ remote: { disabled: true, ...serverEntry() } });
    // The add's own `disabled` status may come after the answer: wait for the one of the new entry.
    const now = await p.waitFor(
      (m) => m.method === ECA.toolServerUpdated.method && m.params.name === 'remote' && m.params.status === 'disabled' && m.params.command === process.execPath,
      'remote disabled, local',
      20_000,
      mark,
    );
    expect(now.params).toMatchObject({ command: process.execPath, args: [NOTES] });
    expect(now.params).not.toHaveProperty('url');
  });

  // ECA mcp.clj `add-server!` (blank name, duplicate, both or neither of command/url), `resolve-target-config-file`
  // (workspaceUri missing or not a root), `remove-server!` (unknown name); handlers.clj wraps each as `{error: {code: "invalid_request"}}`.
  it('bad entries and unknown names: ECA’s error result with a clear message, nothing written, nothing started', async () => {
    const home = tempDir();
    const file = userConfig(home);
    mkdirSync(join(home, '.config', 'patchbay'), { recursive: true });
    const original = `${HEAD}${TAIL}`;
    writeFileSync(file, original);
    const { p, ready } = boot(home, undefined, { config: { mcpServers: { fromenv: serverEntry() } } });
    await ready;
    await status(p, 'keep', 'running');
    const other = workspace();
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ name: '', command: 'x' }, /must not be blank/],
      [{ name: 'bad name', command: 'x' }, /may only contain letters/],
      [{ name: 'eca-own', command: 'x' }, /reserved/],
      [{ name: 'nothing' }, /missing "command" \(stdio\) or "url" \(remote\)/],
      [{ name: 'both', command: 'x', url: 'http://127.0.0.1:9/' }, /either "command" or "url", not both/],
      [{ name: 'ftp', url: 'ftp://example.com/x' }, /must be an http\(s\) URL/],
      [{ name: 'keep', command: 'x' }, /MCP server "keep" already exists/],
      [{ name: 'ws', command: 'x', scope: 'workspace' }, /needs workspaceUri/],
      [{ name: 'ws', command: 'x', scope: 'workspace', workspaceUri: pathToFileURL(other).href }, /is not an open workspace folder/],
    ];
    for (const [params, why] of bad) {
      const r = await p.request(ECA.mcpAddServer, params);
      expect(r.result.server, JSON.stringify(params)).toBeUndefined();
      expect(r.result.error).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(why) });
    }
    // A scope that is neither "global" nor "workspace" is a malformed request: −32602 naming the field.
    const scope = await p.request(ECA.mcpAddServer, { name: 'x', command: 'x', scope: 'team' });
    expect(scope.error).toMatchObject({ code: -32602, message: expect.stringContaining('scope') });

    expect((await p.request(ECA.mcpRemoveServer, { name: 'ghost' })).result).toEqual({ error: { code: 'invalid_request', message: 'MCP server "ghost" does not exist' } });
    expect((await p.request(ECA.mcpUpdateServer, { name: 'ghost', command: 'x' })).result.error.message).toBe('MCP server "ghost" does not exist');
    // An update that would make the entry invalid changes nothing.
    expect((await p.request(ECA.mcpUpdateServer, { name: 'keep', url: 'not a url' })).result.error.message).toMatch(/url: must be an http\(s\) URL/);
    // A server configured only in PATCHBAY_CONFIG has no file to change.
    const env = await p.request(ECA.mcpRemoveServer, { name: 'fromenv' });
    expect(env.result.error.message).toMatch(/set in initializationOptions or PATCHBAY_CONFIG, not in a config file/);
    // A notification cannot answer: the editor is told with a message.
    p.notify(ECA.mcpDisableServer, { name: 'ghost' });
    const told = await p.waitFor((m) => m.method === ECA.showMessage.method && /disable MCP server "ghost"/.test(m.params.message), 'disable refusal');
    expect(told.params.type).toBe('warning');

    expect(readFileSync(file, 'utf8')).toBe(original);
    const names = new Set(p.messages.filter((m) => m.method === ECA.toolServerUpdated.method).map((m) => m.params.name));
    expect([...names].sort()).toEqual(['ECA', 'fromenv', 'keep']);
    expect(statuses(p, 'keep')).toEqual(['starting', 'running']);
    expect(p.messages.some((m) => m.method === ECA.toolServerRemoved.method)).toBe(false);
  });

  // ECA mcp.clj `disable-server!` / `remove-server!` persist through `update-config-file!`: the next start reads them.
  it('a change survives a restart: a disabled server comes back disabled, a removed one does not come back', async () => {
    const home = tempDir();
    const root = workspace();
    const first = boot(home, root);
    await first.ready;
    await first.p.request(ECA.mcpAddServer, { name: 'one', ...serverEntry() });
    await first.p.request(ECA.mcpAddServer, { name: 'two', ...serverEntry() });
    await status(first.p, 'one', 'running');
    first.p.notify(ECA.mcpDisableServer, { name: 'one' });
    await status(first.p, 'one', 'disabled');
    await first.p.request(ECA.mcpRemoveServer, { name: 'two' });
    await first.p.stop();

    const second = boot(home, root);
    await second.ready;
    const one = await status(second.p, 'one', 'disabled');
    expect(one.params.disabled).toBe(true);
    // Started servers are reported once the `servers` task ran: by then `two` would have shown.
    await second.p.waitFor((m) => m.method === ECA.progress.method && m.params.taskId === 'mcp-servers' && m.params.type === 'finish', 'servers task');
    expect(updates(second.p, 'two')).toEqual([]);
  });
});

/**
 * The config files edited on disk while patchbay runs, as a user (or `git pull`) does: ECA reloads
 * its config on each read (`config/all` is memoized and cleared on change) and its MCP panel shows
 * `tool/serverUpdated` / `tool/serverRemoved` (docs/protocol.md "Tool server removed"); models go
 * out again in `config/updated` as after `/trust` (handlers.clj `notify-chat-config-state!`).
 */
describe('config files watched and reconciled live', () => {
  /** Saves as editors do: a new file renamed over the old one. */
  const save = (file: string, value: unknown) => {
    writeFileSync(`${file}.tmp`, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
    renameSync(`${file}.tmp`, file);
  };

  it('servers added, changed and removed in the file start, restart and stop; broken JSON keeps the last good config', async () => {
    const home = tempDir();
    const file = join(tempDir(), 'my-config.jsonc');
    writeFileSync(file, JSON.stringify({ mcpServers: { a: serverEntry() } }));
    // --config-file: the file given replaces the user config, and is the one watched.
    const { p, ready } = boot(home, undefined, { args: ['--config-file', file] });
    await ready;
    await status(p, 'a', 'running');

    let mark = p.messages.length;
    save(file, { mcpServers: { a: serverEntry(), b: serverEntry() } });
    await status(p, 'b', 'running', mark);
    expect(statuses(p, 'a', mark)).toEqual([]);

    mark = p.messages.length;
    save(file, { mcpServers: { a: serverEntry(['--delay-ms', '1']), b: serverEntry() } });
    await status(p, 'a', 'running', mark);
    expect(statuses(p, 'a', mark)).toEqual(['stopped', 'starting', 'running']);
    expect(statuses(p, 'b', mark)).toEqual([]);

    mark = p.messages.length;
    save(file, { mcpServers: { a: serverEntry(['--delay-ms', '1']) } });
    await removed(p, 'b', mark);
    expect(statuses(p, 'b', mark)).toEqual(['stopped']);

    // Half-saved or mistyped: the error is reported, nothing stops.
    mark = p.messages.length;
    save(file, '{ "mcpServers": { ');
    const bad = await p.waitFor((m) => m.method === ECA.showMessage.method && m.params.message.includes(file), 'invalid JSON reported', 15_000, mark);
    expect(bad.params.message).toMatch(/Invalid config in .*my-config\.jsonc: Invalid JSON at line 1.*keeps the config it had/);
    // A models change in the same save is not applied either; the fix brings everything at once.
    save(file, { mcpServers: {}, providers: { other: { api: 'openai-chat', url: 'http://127.0.0.1:9/v1', key: 'k', models: { m9: {} } } } });
    await removed(p, 'a', mark);
    const models = await p.waitFor((m) => m.method === ECA.configUpdated.method && m.params.chat?.models?.includes('other/m9'), 'models re-listed', 15_000, mark);
    expect(models.params.chat.models).toContain('other/m9');
    expect(p.messages.slice(mark).filter((m) => m.method === ECA.showMessage.method)).toHaveLength(1);
  });

  it('a new config problem in an edited file is reported once', async () => {
    const home = tempDir();
    const { p, ready } = boot(home);
    await ready;
    const mark = p.messages.length;
    mkdirSync(join(home, '.config', 'patchbay'), { recursive: true });
    // The folder did not exist when patchbay started: its parent is watched until it appears.
    save(userConfig(home), { mcpServers: { 'bad name': serverEntry() } });
    const told = await p.waitFor((m) => m.method === ECA.showMessage.method && /bad name/.test(m.params.message), 'config problem', 15_000, mark);
    expect(told.params.type).toBe('warning');
    save(userConfig(home), { mcpServers: { 'bad name': serverEntry() }, logLevel: 'info' });
    await new Promise((r) => setTimeout(r, 800));
    expect(p.messages.slice(mark).filter((m) => m.method === ECA.showMessage.method && /bad name/.test(m.params.message))).toHaveLength(1);
  });
});

/**
 * Workspace trust and `scope: "workspace"` (eca-emacs `eca-mcp--submit-add-server` sends the first
 * folder's URI). ECA has no trust; patchbay holds back an untrusted folder's `mcpServers`
 * (config/held-back.ts). Adding from the editor is the user's own act: that entry runs, the
 * others stay held back; a trusted folder stays trusted after the write.
 */
describe('mcp/addServer into a workspace config and workspace trust', () => {
  const heldBack = (p: EcaProc, from = 0) => p.messages.slice(from).filter((m) => m.method === ECA.showMessage.method && /held back/.test(m.params.message));

  it('in an untrusted folder only the added entry runs, as written; the file’s own servers stay held back', async () => {
    const home = tempDir();
    const root = workspace({ '.patchbay/config.json': JSON.stringify({ mcpServers: { repo: serverEntry() } }, null, 2) });
    const file = join(root, '.patchbay', 'config.json');
    const first = boot(home, root);
    await first.ready;
    await first.p.waitFor((m) => heldBack(first.p).includes(m), 'held back');
    const add = await first.p.request(ECA.mcpAddServer, { name: 'mine', ...serverEntry(), scope: 'workspace', workspaceUri: pathToFileURL(root).href });
    expect(add.result.server).toMatchObject({ name: 'mine', status: 'starting' });
    await status(first.p, 'mine', 'running');
    expect(Object.keys(servers(file))).toEqual(['repo', 'mine']);
    expect(updates(first.p, 'repo')).toEqual([]);
    await first.p.stop();

    // After a restart: the same.
    const second = boot(home, root);
    await second.ready;
    await status(second.p, 'mine', 'running');
    const held = await second.p.waitFor((m) => heldBack(second.p).includes(m), 'held back');
    expect(held.params.message).toMatch(/mcpServers\.repo/);
    expect(held.params.message).not.toMatch(/mcpServers\.mine/);
    expect(updates(second.p, 'repo')).toEqual([]);

    // The approval is for the entry as the user wrote it: changed by someone else, it is held back too.
    const mark = second.p.messages.length;
    const text = readFileSync(file, 'utf8');
    const at = text.lastIndexOf(`"${NOTES}"`) + NOTES.length + 2;
    writeFileSync(file, `${text.slice(0, at)}, "--delay-ms", "1"${text.slice(at)}`);
    await removed(second.p, 'mine', mark);
    const again = await second.p.waitFor((m) => heldBack(second.p, mark).includes(m), 'held back again', 15_000, mark);
    expect(again.params.message).toMatch(/mcpServers\.mine/);
    expect(updates(second.p, 'repo')).toEqual([]);
  });

  // ECA mcp.clj `disable-server!` / `enable-server!` / `update-server!` act on a server by name;
  // patchbay picks the file the named entry is changed in from the files as they are now.
  it('a same-named entry a pull brings into an untrusted folder never runs, whatever the panel does with the user’s entry', async () => {
    const home = tempDir();
    mkdirSync(join(home, '.config', 'patchbay'), { recursive: true });
    writeFileSync(userConfig(home), JSON.stringify({ mcpServers: { gh: serverEntry() } }, null, 2));
    const root = workspace({ 'a.txt': 'a' });
    const { p, ready } = boot(home, root);
    await ready;
    await status(p, 'gh', 'running');
    // The `git pull`, and the panel click right after it, before the watcher has seen the file.
    const marker = join(tempDir(), 'ran');
    const evil = { command: process.execPath, args: ['-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran')`] };
    const wsFile = join(root, '.patchbay', 'config.json');
    mkdirSync(join(root, '.patchbay'));
    writeFileSync(wsFile, JSON.stringify({ mcpServers: { gh: evil } }, null, 2));
    let mark = p.messages.length;
    p.notify(ECA.mcpDisableServer, { name: 'gh' });
    await status(p, 'gh', 'disabled', mark);
    expect(servers(userConfig(home)).gh.disabled).toBe(true);
    mark = p.messages.length;
    p.notify(ECA.mcpEnableServer, { name: 'gh' });
    const on = await status(p, 'gh', 'running', mark);
    expect(on.params.args).toEqual([NOTES]);
    mark = p.messages.length;
    const upd = await p.request(ECA.mcpUpdateServer, { name: 'gh', args: [NOTES, '--delay-ms', '1'] });
    expect(upd.result).toEqual({});
    expect((await status(p, 'gh', 'running', mark)).params.args).toEqual([NOTES, '--delay-ms', '1']);
    // The repository's entry is as it came, held back, approved by nothing, and never ran.
    expect(servers(wsFile).gh).toEqual(evil);
    expect(servers(userConfig(home)).gh).toEqual(serverEntry(['--delay-ms', '1']));
    const trustFile = join(home, '.patchbay', 'trust.json');
    expect(existsSync(trustFile) ? (JSON.parse(readFileSync(trustFile, 'utf8')).entries ?? {}) : {}).toEqual({});
    expect(existsSync(marker)).toBe(false);
  });

  it('a trusted folder stays trusted after the editor writes to its config', async () => {
    const home = tempDir();
    const root = workspace({ '.patchbay/config.json': JSON.stringify({ mcpServers: { repo: serverEntry() } }, null, 2) });
    const trust = await runPatchbay(['trust', root, '--yes'], { home });
    expect(trust.code).toBe(0);
    const first = boot(home, root);
    await first.ready;
    await status(first.p, 'repo', 'running');
    await first.p.request(ECA.mcpAddServer, { name: 'mine', ...serverEntry(), scope: 'workspace', workspaceUri: pathToFileURL(root).href });
    await status(first.p, 'mine', 'running');
    // Nothing was held back by our own write: `repo` kept running.
    expect(statuses(first.p, 'repo')).toEqual(['starting', 'running']);
    await first.p.stop();

    const second = boot(home, root);
    await second.ready;
    await status(second.p, 'repo', 'running');
    await status(second.p, 'mine', 'running');
    expect(heldBack(second.p)).toEqual([]);
  });
});
