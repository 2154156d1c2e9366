/**
 * The OS sandbox's pieces without a command run in it (the e2e tests run commands): the bwrap
 * arguments a policy turns into (a made-up file system through bwrapArgs' `kind`), the macOS
 * profile's text, the reasons a failed command is given, the probe's fail-closed answers (a
 * missing binary, a bwrap that cannot make namespaces, the real one), and the policy and plan a
 * workspace's `sandbox` config gives.
 */
import { chmod, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { memoryDirs } from '../../src/core/memory/dirs.js';
import { HIDDEN_DEFAULT, HIDDEN_SYSTEM, WorkspaceSandbox } from '../../src/runtime/sandbox.js';
import { bwrapArgs, forgetSandboxProbes, probeSandbox, sandboxExecProfile, sandboxFailure, type PathKind, type SandboxPolicy } from '../../src/util/sandbox.js';
import { removeDir, tempDir } from './tools-helpers.js';

/** A made-up file system: the listed paths are what they say, every other one is missing. */
const fs =
  (paths: Record<string, PathKind>) =>
  (p: string): PathKind =>
    paths[p] ?? 'missing';

const NAMESPACES = ['--die-with-parent', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try'];
const BASE = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];

describe('bwrapArgs', () => {
  it('binds the writable folders, the read-only ones over them, writable folders inside those again, and hides last', () => {
    // The home folder is a workspace: patchbay's config folder is inside a writable one, and the
    // memory folder inside that.
    const memory = '/home/u/.config/patchbay/memory/projects/u-1';
    const policy: SandboxPolicy = {
      writable: ['/home/u', memory, '/home/u/not-made-yet'],
      readOnly: ['/home/u/.config/patchbay', '/home/u/.patchbay', '/home/u/.eca', '/home/u/.git/hooks', '/home/u/.git/config', '/etc/patchbay.json'],
      hidden: ['/home/u/.ssh', '/home/u/.netrc', '/home/u/.aws'],
      network: false,
    };
    const kind = fs({
      '/home/u': 'dir',
      [memory]: 'dir',
      '/home/u/.config/patchbay': 'dir',
      '/home/u/.git/hooks': 'dir',
      '/home/u/.git/config': 'file',
      '/etc/patchbay.json': 'file',
      '/home/u/.ssh': 'dir',
      '/home/u/.netrc': 'file',
    });
    expect(bwrapArgs(policy, '/home/u/src', kind)).toEqual([
      ...NAMESPACES,
      '--unshare-net',
      ...BASE,
      // Writable (a missing folder is left out).
      ...['--bind', '/home/u', '/home/u'],
      ...['--bind', memory, memory],
      // Read-only over them; a `.patchbay/` or `.eca` not made yet gets nothing (no mount point
      // made up in the user's folder); /etc/patchbay.json is read-only through `/` already.
      ...['--ro-bind', '/home/u/.config/patchbay', '/home/u/.config/patchbay'],
      ...['--ro-bind', '/home/u/.git/hooks', '/home/u/.git/hooks'],
      ...['--ro-bind', '/home/u/.git/config', '/home/u/.git/config'],
      // The memory folder inside the read-only config folder, writable again.
      ...['--bind', memory, memory],
      // Hidden: a folder by an empty read-only tmpfs, a file by /dev/null, a missing path not at all.
      ...['--tmpfs', '/home/u/.ssh', '--remount-ro', '/home/u/.ssh'],
      ...['--ro-bind', '/dev/null', '/home/u/.netrc'],
      ...['--chdir', '/home/u/src'],
    ]);
  });

  it('binds a writable folder once when no read-only folder holding it is bound', () => {
    // The usual case: the workspace is not the home, so the config folder is not inside a writable one.
    const memory = '/home/u/.config/patchbay/memory/projects/app-1';
    const policy: SandboxPolicy = { writable: ['/home/u/src/app', memory], readOnly: ['/home/u', '/home/u/.config/patchbay', '/home/u/src/app/.patchbay'], hidden: [], network: false };
    const kind = fs({ '/home/u': 'dir', '/home/u/src/app': 'dir', [memory]: 'dir', '/home/u/.config/patchbay': 'dir', '/home/u/src/app/.patchbay': 'dir' });
    expect(bwrapArgs(policy, '/home/u/src/app', kind)).toEqual([
      ...NAMESPACES,
      '--unshare-net',
      ...BASE,
      ...['--bind', '/home/u/src/app', '/home/u/src/app'],
      ...['--bind', memory, memory],
      ...['--ro-bind', '/home/u/src/app/.patchbay', '/home/u/src/app/.patchbay'],
      ...['--chdir', '/home/u/src/app'],
    ]);
  });

  it('shows the top-level folders of /tmp that the policy names, read-only, through the private /tmp', () => {
    const policy: SandboxPolicy = {
      writable: ['/tmp/ws-1/app'],
      readOnly: ['/tmp/home-2/.config/patchbay', '/tmp/ws-1/app/.patchbay', '/tmp/config.json'],
      hidden: ['/tmp/home-2/.ssh'],
      network: false,
    };
    const kind = fs({
      '/tmp/ws-1': 'dir',
      '/tmp/ws-1/app': 'dir',
      '/tmp/ws-1/app/.patchbay': 'dir',
      '/tmp/home-2': 'dir',
      '/tmp/home-2/.config/patchbay': 'dir',
      '/tmp/home-2/.ssh': 'dir',
      '/tmp/config.json': 'file',
    });
    expect(bwrapArgs(policy, '/tmp/ws-1/app', kind)).toEqual([
      ...NAMESPACES,
      '--unshare-net',
      ...BASE,
      ...['--ro-bind', '/tmp/ws-1', '/tmp/ws-1'],
      ...['--ro-bind', '/tmp/home-2', '/tmp/home-2'],
      ...['--bind', '/tmp/ws-1/app', '/tmp/ws-1/app'],
      // The config folder is read-only through /tmp/home-2; a file right in /tmp is bound by itself.
      ...['--ro-bind', '/tmp/ws-1/app/.patchbay', '/tmp/ws-1/app/.patchbay'],
      ...['--ro-bind', '/tmp/config.json', '/tmp/config.json'],
      ...['--tmpfs', '/tmp/home-2/.ssh', '--remount-ro', '/tmp/home-2/.ssh'],
      ...['--chdir', '/tmp/ws-1/app'],
    ]);
  });

  it('keeps a missing .patchbay outside the writable folders as it is (it cannot be made there anyway)', () => {
    const policy: SandboxPolicy = { writable: ['/w/app'], readOnly: ['/elsewhere/.patchbay'], hidden: [], network: false };
    expect(bwrapArgs(policy, '/w/app', fs({ '/w/app': 'dir' }))).not.toContain('/elsewhere/.patchbay');
  });

  it('unshares the network unless the policy allows it', () => {
    const policy: SandboxPolicy = { writable: [], readOnly: [], hidden: [], network: false };
    expect(bwrapArgs(policy, '/', fs({}))).toContain('--unshare-net');
    const open = bwrapArgs({ ...policy, network: true }, '/', fs({}));
    expect(open).not.toContain('--unshare-net');
    expect(open.slice(0, NAMESPACES.length)).toEqual(NAMESPACES);
  });
});

describe('bwrapArgs: what the command is given under /tmp', () => {
  it('the folder under /tmp of cwd and of each seen path is seen as it is, read-only; other /tmp paths are not', () => {
    const policy: SandboxPolicy = { writable: ['/home/u/app'], readOnly: [], hidden: [], network: false };
    const kind = fs({ '/home/u/app': 'dir', '/tmp/srv': 'dir', '/tmp/run': 'dir' });
    const args = bwrapArgs(policy, '/tmp/run/sub', kind, ['/tmp/srv/server.mjs']);
    expect(args.slice(NAMESPACES.length + 1 + BASE.length, NAMESPACES.length + 1 + BASE.length + 6)).toEqual(['--ro-bind', '/tmp/run', '/tmp/run', '--ro-bind', '/tmp/srv', '/tmp/srv']);
    expect(bwrapArgs(policy, '/home/u/app', kind).join(' ')).not.toContain('/tmp/srv');
  });
});

describe('bwrapArgs: pinned paths', () => {
  it('a pinned folder is bound onto itself (it cannot be renamed), a pinned file read-only, and a read-only path missing inside a pinned folder made empty and read-only', () => {
    const root = '/home/u/app';
    const policy: SandboxPolicy = { writable: [root], readOnly: [`${root}/.git/hooks`, `${root}/.git/config`], hidden: [], network: false, pinned: [`${root}/.git`] };
    const args = bwrapArgs(policy, root, fs({ [root]: 'dir', [`${root}/.git`]: 'dir', [`${root}/.git/config`]: 'file' }));
    expect(args.slice(NAMESPACES.length + 1 + BASE.length)).toEqual([
      ...['--bind', root, root],
      ...['--bind', `${root}/.git`, `${root}/.git`],
      ...['--tmpfs', `${root}/.git/hooks`, '--remount-ro', `${root}/.git/hooks`],
      ...['--ro-bind', `${root}/.git/config`, `${root}/.git/config`],
      ...['--chdir', root],
    ]);
    // A worktree's .git file is read-only; a .git that is not there is not made up.
    const file = bwrapArgs(policy, root, fs({ [root]: 'dir', [`${root}/.git`]: 'file' }));
    expect(file).toEqual(expect.arrayContaining(['--ro-bind', `${root}/.git`, `${root}/.git`]));
    expect(file.join(' ')).not.toContain('hooks');
    expect(bwrapArgs(policy, root, fs({ [root]: 'dir' })).join(' ')).not.toContain('.git');
  });
});

describe('sandboxExecProfile', () => {
  const policy: SandboxPolicy = { writable: ['/Users/u/app'], readOnly: ['/Users/u/app/.patchbay'], hidden: ['/Users/u/.ssh'], network: false };

  it('denies by default, hides the hidden paths, writes only in the writable and temp folders, and allows only loopback', () => {
    expect(sandboxExecProfile(policy).split('\n')).toEqual([
      '(version 1)',
      '(deny default)',
      '(allow process-exec)',
      '(allow process-fork)',
      '(allow signal (target same-sandbox))',
      '(allow sysctl-read)',
      '(allow mach-lookup)',
      '(allow ipc-posix-shm)',
      '(allow file-read*)',
      '(deny file-read* (subpath "/Users/u/.ssh"))',
      '(allow file-write* (subpath "/Users/u/app") (subpath "/private/tmp") (subpath "/private/var/folders") (literal "/dev/null") (literal "/dev/tty"))',
      '(deny file-write* (subpath "/Users/u/app/.patchbay"))',
      '(deny file-write* (subpath "/Users/u/.ssh"))',
      '(allow network* (remote ip "localhost:*"))',
      '(allow network* (local ip "localhost:*"))',
      '',
    ]);
  });

  it('allows the network when the policy does', () => {
    const lines = sandboxExecProfile({ ...policy, network: true })
      .trimEnd()
      .split('\n');
    expect(lines.at(-1)).toBe('(allow network*)');
    expect(lines.filter((l) => l.includes('network'))).toEqual(['(allow network*)']);
  });

  it('quotes paths as SBPL strings', () => {
    expect(sandboxExecProfile({ ...policy, hidden: ['/Users/u/a "b"'] })).toContain('(deny file-read* (subpath "/Users/u/a \\"b\\""))');
  });
});

describe('sandboxFailure', () => {
  const policy: SandboxPolicy = { writable: ['/w/app'], readOnly: [], hidden: ['/home/u/.ssh'], network: false };

  it('names a read-only file system', () => {
    expect(sandboxFailure("touch: cannot touch '/etc/x': Read-only file system", policy)).toMatch(/read-only but \/w\/app and \/tmp/);
    expect(sandboxFailure('Error: EROFS: read-only file system, open', policy)).toBeDefined();
  });

  it('names the missing network, only where the policy has none', () => {
    for (const out of ['curl: (6) Could not resolve host: example.com', 'connect: Network is unreachable', 'Error: connect ECONNREFUSED 127.0.0.1:8080']) {
      expect(sandboxFailure(out, policy)).toMatch(/no network/);
      expect(sandboxFailure(out, { ...policy, network: true })).toBeUndefined();
    }
  });

  it('names a hidden path the output mentions', () => {
    expect(sandboxFailure('cat: /home/u/.ssh/id_ed25519: No such file or directory', policy)).toBe('the sandbox hides /home/u/.ssh');
  });

  it('says nothing of unrelated output', () => {
    expect(sandboxFailure('error TS2322: Type string is not assignable to type number', policy)).toBeUndefined();
    expect(sandboxFailure('cat: /w/app/missing.txt: No such file or directory', policy)).toBeUndefined();
  });
});

describe('probeSandbox', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir('patchbay-sandbox-');
    forgetSandboxProbes();
  });
  afterEach(async () => {
    forgetSandboxProbes();
    await removeDir(dir);
  });

  it('is not ok where the named binary does not exist, and says to install bubblewrap', async () => {
    const s = await probeSandbox({ ...process.env, PATCHBAY_BWRAP: '/nonexistent/bwrap' }, 'linux');
    expect(s.ok).toBe(false);
    if (s.ok) return;
    expect(s.why).toContain('/nonexistent/bwrap');
    expect(s.fix).toContain('apt-get install bubblewrap');
  });

  it('is not ok where bwrap cannot make its namespaces, and gives the sysctl', async () => {
    const fake = join(dir, 'bwrap');
    await writeFile(
      fake,
      '#!/bin/sh\nif [ "$1" = "--version" ]; then echo "bubblewrap 0.8.0"; exit 0; fi\necho "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces" >&2\nexit 1\n',
    );
    await chmod(fake, 0o755);
    const s = await probeSandbox({ ...process.env, PATCHBAY_BWRAP: fake }, 'linux');
    expect(s.ok).toBe(false);
    if (s.ok) return;
    expect(s.why).toContain('No permissions to creating new namespace');
    expect(s.fix).toContain('sysctl');
    expect(s.fix).toContain('kernel.unprivileged_userns_clone=1');
  });

  it('is ok with the real bwrap, and gives its version', async () => {
    const s = await probeSandbox(process.env, 'linux');
    expect(s).toMatchObject({ ok: true, kind: 'bubblewrap' });
    if (s.ok) expect(s.version).toMatch(/^\d+\.\d+(\.\d+)?$/);
  });

  it('is not ok off Linux', async () => {
    const s = await probeSandbox(process.env, 'darwin');
    expect(s.ok).toBe(false);
    if (!s.ok) expect(s.why).toContain('sandbox-exec');
  });
});

describe('WorkspaceSandbox', () => {
  let home: string;
  let r1: string;
  let r2: string;
  let env: NodeJS.ProcessEnv;
  beforeEach(async () => {
    [home, r1, r2] = await Promise.all([tempDir('patchbay-sandbox-home-'), tempDir('patchbay-sandbox-r1-'), tempDir('patchbay-sandbox-r2-')]);
    env = { PATH: process.env.PATH, HOME: home, PATCHBAY_HOME: join(home, 'pb-home') };
    forgetSandboxProbes();
  });
  afterEach(async () => {
    forgetSandboxProbes();
    await Promise.all([home, r1, r2].map(removeDir));
  });
  const sandboxWith = (config: Record<string, unknown>, more: NodeJS.ProcessEnv = {}, configFile?: string) => {
    const parsed = configSchema.parse(config);
    return new WorkspaceSandbox({ env: { ...env, ...more }, homeDir: home, config: () => parsed, ...(configFile ? { configFile } : {}) });
  };

  it('makes the roots writable, and the memory folders only when memory is on', () => {
    expect(sandboxWith({}).policy([r1, r2]).writable).toEqual([r1, r2]);
    const dirs = memoryDirs([r1, r2], env, home).map((d) => d.dir);
    expect(dirs.length).toBeGreaterThan(0);
    expect(sandboxWith({ memory: { enabled: true } }).policy([r1, r2]).writable).toEqual([r1, r2, ...dirs]);
  });

  it('expands ~/ in writable and hidden, and reads other relative paths from the roots', () => {
    const p = sandboxWith({ sandbox: { writable: ['~/build-cache', 'out', '/opt/cache'], hidden: ['~/.secret', 'private'] } }).policy([r1, r2]);
    expect(p.writable).toEqual([r1, r2, join(home, 'build-cache'), join(r1, 'out'), join(r2, 'out'), '/opt/cache']);
    expect(p.hidden).toContain(join(home, '.secret'));
    expect(p.hidden).toContain(resolve(r1, 'private'));
  });

  it('hides the default list, the host sockets and patchbay home', () => {
    const p = sandboxWith({}).policy([r1]);
    expect(p.hidden).toEqual([...HIDDEN_DEFAULT.map((h) => join(home, h.slice(2))), ...HIDDEN_SYSTEM, join(home, 'pb-home')]);
    const agents = sandboxWith({}, { XDG_RUNTIME_DIR: '/run/user/1000', SSH_AUTH_SOCK: '/tmp/ssh-x/agent.1' }).policy([r1]);
    expect(agents.hidden).toEqual(expect.arrayContaining(['/run/user/1000', '/tmp/ssh-x/agent.1', '/run/dbus', '/run/docker.sock']));
    expect(HIDDEN_DEFAULT).toEqual(expect.arrayContaining(['~/.ssh', '~/.aws', '~/.gnupg', '~/.config/gcloud']));
  });

  it("keeps the user config folder, --config-file and each root's .patchbay, .eca, .git/hooks and .git/config read-only", () => {
    const file = join(home, 'cli-config.json');
    const p = sandboxWith({}, { XDG_CONFIG_HOME: join(home, 'xdg') }, file).policy([r1, r2]);
    expect(p.readOnly).toEqual(expect.arrayContaining([join(home, 'xdg', 'patchbay'), file]));
    for (const r of [r1, r2]) expect(p.readOnly).toEqual(expect.arrayContaining([join(r, '.patchbay'), join(r, '.eca'), join(r, '.git', 'hooks'), join(r, '.git', 'config')]));
    expect(sandboxWith({}).policy([r1]).readOnly).toContain(join(home, '.config', 'patchbay'));
  });

  it('keeps the network off unless the config turns it on', () => {
    expect(sandboxWith({}).policy([r1]).network).toBe(false);
    expect(sandboxWith({ sandbox: { network: true } }).policy([r1]).network).toBe(true);
  });

  it('plans no sandbox when it is off, goes without one under auto where there is no bwrap, and refuses under true', async () => {
    const none = { PATCHBAY_BWRAP: '/nonexistent/bwrap' };
    expect(await sandboxWith({ sandbox: { enabled: false } }).plan([r1])).toEqual({ kind: 'off', why: 'sandbox.enabled is false' });
    const auto = await sandboxWith({}, none).plan([r1]);
    expect(auto.kind).toBe('off');
    if (auto.kind === 'off') expect(auto.why).toMatch(/cannot be sandboxed here: .*nonexistent.*apt-get install bubblewrap/);
    const strict = await sandboxWith({ sandbox: { enabled: true } }, none).plan([r1]);
    expect(strict.kind).toBe('refuse');
    if (strict.kind === 'refuse') expect(strict.why).toMatch(/^sandbox\.enabled is true but commands cannot be sandboxed here: .*apt-get install bubblewrap/);
  });

  it('plans the sandbox where bwrap works, wrapping a command in bwrap', async () => {
    const plan = await sandboxWith({ sandbox: { autoAllow: false } }).plan([r1]);
    expect(plan.kind).toBe('sandboxed');
    if (plan.kind !== 'sandboxed') return;
    expect(plan.autoAllow).toBe(false);
    const run = plan.wrap({ command: '/bin/sh', args: ['-c', 'true'] }, r1);
    expect(run.command).toBe(plan.support.bwrap);
    expect(run.args.slice(-6)).toEqual(['--chdir', r1, '--', '/bin/sh', '-c', 'true']);
    expect(run.args).toEqual(expect.arrayContaining(['--bind', r1, r1]));
  });
});
