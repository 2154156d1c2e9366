/** McpHostImpl.reconcile: the configured servers changed while running (a file edited, mcp/addServer…). */
import { describe, expect, it } from 'vitest';
import { fixture, isAlive, useHosts, waitFor } from '../support/mcp-helpers.js';

const notes = (...extra: string[]) => ({ command: process.execPath, args: [fixture('mcp-notes.mjs'), ...extra] });
const makeHost = useHosts();

describe('McpHostImpl.reconcile', () => {
  it('starts new entries, restarts changed ones (old process gone first), stops removed ones, leaves the rest', async () => {
    const removed: string[] = [];
    const h = makeHost({ same: notes(), changes: notes(), goes: notes() }, { events: { serverUpdated: (i) => h.events.push(i), serverRemoved: (n) => removed.push(n) } });
    h.host.startAll();
    await waitFor(() => h.host.servers().every((s) => s.status === 'running'), 'all running');
    const oldPid = h.host.pid('changes')!;
    const gonePid = h.host.pid('goes')!;
    const samePid = h.host.pid('same');

    // `same` saved with its keys in another order and an explicit `disabled: false`: the same server.
    const { command, args } = notes();
    const r = h.host.reconcile({ same: { args, command, disabled: false }, changes: notes('--delay-ms', '1'), added: notes() });
    expect(r).toEqual({ added: ['added'], changed: ['changes'], removed: ['goes'] });
    await h.host.reconciled();
    expect(isAlive(oldPid)).toBe(false);
    expect(isAlive(gonePid)).toBe(false);
    expect(removed).toEqual(['goes']);
    await waitFor(() => h.host.servers().every((s) => s.status === 'running'), 'running again');
    expect(h.host.servers().map((s) => s.name)).toEqual(['same', 'changes', 'added']);
    expect(h.host.pid('same')).toBe(samePid);
    expect(h.statuses('same')).toEqual(['starting', 'running']);
    expect(h.statuses('changes')).toEqual(['starting', 'running', 'stopped', 'starting', 'running']);
    expect(h.statuses('goes')).toEqual(['starting', 'running', 'stopped']);
    // Tools follow: the removed server's are gone, the new one's are there.
    const servers = new Set(h.tools.all().map((t) => t.server));
    expect(servers.has('goes')).toBe(false);
    expect(servers.has('added')).toBe(true);
  });

  it('a server the user stopped stays stopped when its entry did not change; a disabled entry is reported, not started', async () => {
    const h = makeHost({ a: notes() });
    h.host.startAll();
    await waitFor(() => h.host.servers()[0].status === 'running', 'a running');
    await h.host.stop('a');
    h.host.reconcile({ a: notes(), b: { ...notes(), disabled: true } });
    await h.host.reconciled();
    expect(h.host.servers().map((s) => [s.name, s.status])).toEqual([
      ['a', 'stopped'],
      ['b', 'disabled'],
    ]);
  });

  it('two reconciles in a row end with the last one’s entry running, once', async () => {
    const h = makeHost({ a: notes() });
    h.host.startAll();
    await waitFor(() => h.host.servers()[0].status === 'running', 'a running');
    h.host.reconcile({ a: notes('--delay-ms', '1') });
    h.host.reconcile({ a: notes('--delay-ms', '2') });
    await h.host.reconciled();
    await waitFor(() => h.host.servers()[0].status === 'running', 'a running again');
    expect(h.host.servers()[0].args).toEqual([fixture('mcp-notes.mjs'), '--delay-ms', '2']);
    expect(h.host.servers()).toHaveLength(1);
  });

  it('before startAll, a reload only registers: nothing starts early, a removed entry never starts, startAll starts what is configured then', async () => {
    const h = makeHost({ first: notes() });
    // A folder added before the editor's `initialized` brings `added`; one removed takes `first` away.
    expect(h.host.reconcile({ first: notes(), added: notes() })).toEqual({ added: ['added'], changed: [], removed: [] });
    await h.host.reconciled();
    expect(h.host.servers().map((s) => [s.name, s.status])).toEqual([
      ['first', 'stopped'],
      ['added', 'stopped'],
    ]);
    expect(h.host.pid('added')).toBeUndefined();
    h.host.reconcile({ added: notes() });
    await h.host.reconciled();
    h.host.startAll();
    await waitFor(() => h.host.servers().every((s) => s.status === 'running'), 'added running');
    expect(h.host.servers().map((s) => s.name)).toEqual(['added']);
    expect(h.statuses('first')).toEqual([]);
    expect(h.statuses('added')).toEqual(['starting', 'running']);
  });
});
