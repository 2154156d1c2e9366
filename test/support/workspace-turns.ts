/**
 * A Workspace built directly (Workspace.create, as a façade does) over the fake LLM server on
 * real HTTP, with temp HOME / PATCHBAY_HOME / XDG_CONFIG_HOME and a temp (untrusted) folder, and a
 * recorder of what it tells the front end. For front-end abilities the ECA server cannot express
 * (a chat's own MCP servers, reject-for-the-session), which the ACP façade will call.
 */
import { mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Workspace } from '../../src/runtime/workspace.js';
import type { ChatEvent } from '../../src/core/events.js';
import type { ToolServerStatus } from '../../src/shapes/peer.js';
import { FakeLlm } from '../fixtures/fake-llm.js';
import { fakeProviderConfig } from '../e2e/harness.js';
import { logToStderr } from '../../src/util/log.js';

export interface TurnsWorkspace {
  ws: Workspace;
  llm: FakeLlm;
  home: string;
  root: string;
  /** Every chat event, with its chat. */
  events: Array<{ chatId: string; e: ChatEvent }>;
  /** Every tool-server status, in order, and the names reported removed. */
  statuses: ToolServerStatus[];
  removed: string[];
  /** Called on each chat event after it is recorded (a test answers approvals here). */
  onEvent(f: (chatId: string, e: ChatEvent) => void): void;
  /** The tool-call events of one chat, as `state:name` (`announced!` when it asked). */
  calls(chatId: string): string[];
  close(): Promise<void>;
}

const dir = (prefix: string) => realpathSync(mkdtempSync(join(tmpdir(), prefix)));

export async function turnsWorkspace(config: Record<string, unknown> = {}): Promise<TurnsWorkspace> {
  logToStderr(false);
  const llm = await FakeLlm.start();
  const home = dir('pb-turns-home-');
  const root = dir('pb-turns-root-');
  const events: TurnsWorkspace['events'] = [];
  const statuses: ToolServerStatus[] = [];
  const removed: string[] = [];
  let hook: (chatId: string, e: ChatEvent) => void = () => {};
  const ws = await Workspace.create({
    roots: [root],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      PATCHBAY_HOME: join(home, '.patchbay'),
      XDG_CONFIG_HOME: join(home, '.config'),
      PATCHBAY_LOCAL_MODEL: 'off',
      PATCHBAY_CONFIG: JSON.stringify({ gateway: { enabled: false }, openctx: { host: { enabled: false } }, ...fakeProviderConfig(llm.url), ...config }),
    },
    frontEnd: { canAsk: true, canShowDiffs: false },
    events: {
      event: (chatId, e) => {
        events.push({ chatId, e });
        hook(chatId, e);
      },
      opened() {},
      cleared() {},
      deleted() {},
      showMessage() {},
    },
    onToolServer: (s) => statuses.push(s),
    onToolServerRemoved: (name) => removed.push(name),
    logLevel: 'debug',
  });
  await ws.modelsReady;
  return {
    ws,
    llm,
    home,
    root,
    events,
    statuses,
    removed,
    onEvent: (f) => (hook = f),
    calls: (chatId) =>
      events.flatMap(({ chatId: c, e }) => (c === chatId && e.type === 'toolCall' && e.state !== 'preparing' ? [`${e.state}${e.state === 'announced' && e.needsApproval ? '!' : ''}:${e.name}`] : [])),
    close: async () => {
      await ws.dispose();
      await llm.close();
      rmSync(home, { recursive: true, force: true });
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Every file under `dir`, relative, sorted (to show nothing was written). */
export function filesUnder(d: string): string[] {
  try {
    return (readdirSync(d, { recursive: true, withFileTypes: true }) as Array<{ name: string; parentPath: string; isFile(): boolean }>)
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name).slice(d.length + 1))
      .sort();
  } catch {
    return [];
  }
}
