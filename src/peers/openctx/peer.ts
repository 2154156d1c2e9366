/**
 * The OpenCtx peer as the runtime sees it: the client side (mentions in the @-search, items for
 * mentions and messages, annotations beside files and as a tool) and the host that serves
 * patchbay's own providers (workspace files, diagnostics, MCP resources, event streams) and the
 * user's module providers on loopback, behind a token.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import type { Peer, PeerConfig, PeerHost } from '../../shapes/peer.js';
import type { ResourceContext } from '../../shapes/context.js';
import { defineNativeTool } from '../../shapes/define-tool.js';
import { textResult } from '../../shapes/tool.js';
import { resolvePath } from '../../util/paths.js';
import { readContainedText } from '../../util/contained.js';
import { errorMessage, logger } from '../../util/log.js';
import type { openctxConfig } from './settings.js';
import { OpenCtxClient, renderAnnotations, type ClientMention, type ProviderHealth } from './client/index.js';
import { OpenCtxHost, diagnostics as diagnosticsProvider, eventStreams, mcpResources, moduleProvider, workspaceFiles, type OpenCtxProviderImpl } from './host/index.js';
import { safely } from '../../util/guards.js';
import { underDeadline } from '../../util/deadline.js';

type Config = PeerConfig<typeof openctxConfig>;

export function createOpenCtxPeer(host: PeerHost<Config>): Peer {
  const configured = () => Object.keys(host.config().openctx.providers).length > 0;
  /**
   * Where the user's module providers resolve from: the workspace when trusted, else the folder of
   * the user's own config file (an untrusted clone must not shadow their modules).
   */
  const moduleBase = (): string => {
    const root = host.roots()[0];
    return root && host.trustedFolder(root) ? root : host.userConfigDir();
  };
  const client = new OpenCtxClient({ config: host.config().openctx, roots: host.roots(), moduleBase: moduleBase(), log: logger('openctx') });
  let served: OpenCtxHost | undefined;

  /** Annotations of a file, as text beside its content ('' when none). */
  const annotate = async (path: string, content: string, signal: AbortSignal): Promise<string> => {
    if (!configured()) return '';
    const list = await client.annotations(pathToFileURL(path).href, content, signal);
    return list.length ? renderAnnotations(list) : '';
  };

  if (configured()) {
    host.tools.set('openctx', [
      defineNativeTool({
        name: 'openctx_annotations',
        description: 'Annotations OpenCtx providers have for a file (linked issues, docs, owners, warnings…), with the line ranges they refer to.',
        schema: z.object({ path: z.string().min(1).describe('Path of the file (absolute or relative to the workspace).') }),
        readOnly: true,
        mutates: false,
        pathArgs: ['path'],
        summary: (a) => (a.path ? `Annotations of "${a.path}"` : 'Annotations'),
        run: async (args, ctx) => {
          const path = resolvePath(args.path, ctx.roots);
          const content = await readContainedText(path, { roots: ctx.roots, confined: ctx.confined });
          const text = await annotate(path, content, ctx.signal);
          return textResult(text || `No annotations for ${path}.`);
        },
      }),
    ]);
  }

  /**
   * Mentions are collected per provider as each answers, until all have or the deadline passes: a
   * slow provider costs at most the deadline and never holds back what the fast ones returned.
   * Offered as resource contexts of server `openctx:<provider>`, read back through this peer.
   */
  const mentions = async (query: string): Promise<ResourceContext[]> => {
    if (!configured()) return [];
    const arrived: ClientMention[][] = [];
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((r) => (timer = setTimeout(r, host.config().openctx.timeoutMs)));
    const all = client.mentionsStreaming(query, (b) => (arrived[b.index] = b.mentions), abort.signal).then(() => undefined);
    await Promise.race([all, deadline]);
    clearTimeout(timer);
    abort.abort();
    return arrived
      .flat()
      .filter(Boolean)
      .map((m) => ({ type: 'resource' as const, uri: m.uri, name: m.name, description: m.description ?? '', mimeType: m.mimeType, server: m.server }));
  };

  /**
   * The workspaces of one process share one OpenCtx host (shapes/shared.ts): the first one to
   * start it listens, and it serves the oldest workspace still open; a later one only joins.
   */
  const listener = host.share?.('openctx-host', () => new SharedOpenCtxListener());
  const members = listener?.value.members;
  members?.push(host);
  /** The workspace the listener serves now (this one without a host to share with). */
  const current = (): PeerHost<Config> => (members?.[0] as PeerHost<Config> | undefined) ?? host;

  /** Serves patchbay's own OpenCtx providers (and the user's modules) on loopback, token-protected. */
  const start = async (): Promise<void> => {
    const cfg = host.config().openctx.host;
    if (!cfg.enabled) return;
    if (listener) {
      // Another workspace of this process serves already (or is starting to).
      if (listener.value.claimed) return;
      listener.value.claimed = true;
    }
    const providers: Record<string, OpenCtxProviderImpl> = {
      files: workspaceFiles({
        query: (q) =>
          current()
            .queryFiles(q)
            .map((path) => ({ type: 'file', path })),
        roots: () => current().roots(),
      }),
      diagnostics: diagnosticsProvider({ get: async (uri) => (await current().editorDiagnostics(uri)).map((d) => ({ ...d, source: d.source ?? undefined })) }),
      'mcp-resources': mcpResources({ list: () => current().resources(), read: (server, uri) => underDeadline(30_000, [], (signal) => current().readResource({ server, uri }, signal)) }),
      'event-streams': eventStreams({ streams: () => host.events.streams(), query: (f) => host.events.queryEvents(f) }),
    };
    for (const [name, path] of Object.entries(cfg.providers)) providers[name] = moduleProvider(resolve(moduleBase(), path));
    const token = `octx-${randomBytes(16).toString('hex')}`;
    const server = new OpenCtxHost({ host: '127.0.0.1', port: cfg.port, token, providers, log: logger('openctx-host') });
    let url: string;
    try {
      ({ url } = await server.start());
    } catch (e) {
      // Not listening: the next workspace to start may try.
      if (listener) listener.value.claimed = false;
      throw e;
    }
    served = server;
    if (listener) {
      listener.value.stop = () => stopServed();
      listener.value.url = () => served?.url;
      listener.value.force = removeListenerFiles;
    }
    const dir = join(host.home, 'openctx');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, 'token'), `${token}\n`, { mode: 0o600 });
    writeFileSync(join(dir, 'address'), `${url}\n`, { mode: 0o600 });
    host.log.info(`OpenCtx host serving ${Object.keys(providers).join(', ')} on ${url}`);
  };

  /** The files that tell others where the host listens: only our own (a second server sharing this home may have written its own since). */
  const removeListenerFiles = (): void => {
    try {
      const dir = join(host.home, 'openctx');
      if (served && safely(() => readFileSync(join(dir, 'address'), 'utf8').trim()) === served.url) {
        rmSync(join(dir, 'token'), { force: true });
        rmSync(join(dir, 'address'), { force: true });
      }
    } catch (e) {
      host.log.warn(`removing the OpenCtx listener files: ${errorMessage(e)}`);
    }
  };

  const stopServed = async (): Promise<void> => {
    await Promise.resolve(served?.stop()).catch((e: unknown) => host.log.error(`stopping the OpenCtx host: ${errorMessage(e)}`));
    removeListenerFiles();
  };

  return {
    start: () => start().catch((e: unknown) => host.log.error(`OpenCtx host could not start: ${errorMessage(e)}`)),
    mentions,
    readContext: (ctx, signal) => (ctx.server.startsWith('openctx:') ? client.itemsForMention(ctx, signal) : undefined),
    messageContext: (message, signal) => client.itemsForMessage(message, signal),
    annotate,
    // Providers' selectors match paths relative to the new folders; the files provider reads host.roots() itself.
    rootsChanged: () => client.setRoots(host.roots()),
    async dispose() {
      try {
        client.dispose();
      } catch (e) {
        host.log.error(`stopping OpenCtx providers: ${errorMessage(e)}`);
      }
      if (listener) {
        members?.splice(members.indexOf(host), 1);
        // The last workspace's release stops the listener (whichever workspace started it).
        await listener.release();
      } else await stopServed();
    },
    forceClose: () => {
      if (!listener || (members?.length ?? 0) <= 1) removeListenerFiles();
    },
    async doctor() {
      const providers = await client.health();
      return {
        lines: [
          ...(providers.length ? ['OpenCtx providers:', ...providers.map(openCtxLine)] : ['OpenCtx providers: none configured']),
          // `patchbay doctor` does not listen itself.
          `OpenCtx host: ${served?.url ?? listener?.value.url() ?? 'not serving'}`,
        ],
      };
    },
  };
}

/** `name (uri): ok — capabilities`, or the error its `meta` gave (module not found, connection refused, bad meta). */
function openCtxLine(p: ProviderHealth): string {
  const label = p.name === p.provider ? p.name : `${p.name} (${p.provider})`;
  if (!p.ok) return `  - ${label}: failing — ${p.error ?? 'unknown error'}`;
  const notes = [
    p.capabilities.length ? p.capabilities.join(', ') : 'no capabilities',
    ...(p.unnamed ? [`meta has no name, so it is called "${p.name}"`] : []),
    ...(p.lastError ? [`last error: ${p.lastError}`] : []),
  ];
  return `  - ${label}: ok — ${notes.join('; ')}`;
}

/** The process's one OpenCtx listener (shapes/shared.ts): who serves, and how it stops. */
class SharedOpenCtxListener {
  /** The workspaces' peer hosts, oldest first: the listener serves the first. */
  readonly members: unknown[] = [];
  /** A workspace has started (or is starting) the listener. */
  claimed = false;
  stop: () => Promise<void> = async () => {};
  url: () => string | undefined = () => undefined;
  force: () => void = () => {};
  dispose(): Promise<void> {
    return this.stop();
  }
  forceClose(): void {
    this.force();
  }
}
