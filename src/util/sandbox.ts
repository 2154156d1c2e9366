/**
 * The OS sandbox a command runs in: on Linux, bubblewrap (`bwrap`) with its own mount, pid, ipc
 * and (unless the network is allowed) network namespace. What the command sees:
 *
 *   - everything read-only (`--ro-bind / /`), a fresh `/dev` and `/proc`, and a private `/tmp`;
 *   - the writable folders (the chat's roots, the memory folders, `sandbox.writable`) bound
 *     read-write over that;
 *   - the read-only folders (patchbay's config, each root's `.patchbay/`, `.git/hooks` and
 *     `.git/config`) bound read-only again over those, so a writable root does not open them;
 *   - the hidden paths (`~/.ssh`, patchbay's home…) replaced by an empty folder (a file by
 *     `/dev/null`);
 *   - no network but its own loopback; a pid namespace whose first process is bwrap's, so when
 *     the command ends (or bwrap is killed, or patchbay dies: `--die-with-parent`) the kernel
 *     kills every process it started, `setsid` and double forks included.
 *
 * Protocol- and config-free: runtime/sandbox.ts turns the `sandbox` config into a policy;
 * `probeSandbox` says once per binary whether bubblewrap works here, and why not.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

export interface SandboxPolicy {
  /** Absolute folders the command may write (bound read-write). Missing ones are left out. */
  writable: string[];
  /** Absolute paths kept read-only even inside a writable folder. */
  readOnly: string[];
  /** Absolute paths the command cannot read: an empty folder, or /dev/null for a file. */
  hidden: string[];
  /** The host's network; false: a network namespace with loopback only. */
  network: boolean;
  /**
   * Paths inside a writable folder made mount points of their own, so the command cannot rename
   * or remove them (EBUSY) and put its own in their place: a folder stays writable (a `.git`,
   * whose `hooks` and `config` the read-only list keeps), a file becomes read-only (a worktree's
   * `.git` file, which names the repository). A read-only path missing inside a pinned folder is
   * made as an empty read-only one there (`.git/hooks`), so the command cannot create it.
   */
  pinned?: string[];
}

export type SandboxSupport =
  /** `bwrap`: the binary, bubblewrap's or macOS's sandbox-exec. */
  | { ok: true; kind: 'bubblewrap' | 'sandbox-exec'; bwrap: string; version: string }
  | { ok: false; /** Why commands cannot be sandboxed here. */ why: string; /** What the user can do about it. */ fix: string };

/** How a command is started: a program and its arguments. */
export interface Argv {
  command: string;
  args: string[];
}

/** `PATCHBAY_BWRAP` names the binary (an absolute path); else `bwrap` on the PATH. */
export function findBwrap(env: NodeJS.ProcessEnv): string | undefined {
  const named = env.PATCHBAY_BWRAP;
  if (named) return isAbsolute(named) && executable(named) ? named : undefined;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, 'bwrap');
    if (executable(p)) return p;
  }
  return undefined;
}

function executable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

const INSTALL_FIX = 'install bubblewrap (Debian and Ubuntu: `sudo apt-get install bubblewrap`; Fedora: `sudo dnf install bubblewrap`; Arch: `sudo pacman -S bubblewrap`)';
const USERNS_FIX =
  'allow unprivileged user namespaces: `sudo sysctl -w kernel.unprivileged_userns_clone=1` (Debian), or on Ubuntu 23.10 and later `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`; in a container, run it with user namespaces allowed';
/** A probe that takes longer than this counts as unusable. */
const PROBE_TIMEOUT_MS = 10_000;

const probes = new Map<string, Promise<SandboxSupport>>();
const SANDBOX_EXEC = '/usr/bin/sandbox-exec';

/**
 * Whether bubblewrap works here, tried once per binary and process: `bwrap --version`, then a
 * `true` in the same namespaces a command gets. Never rejects.
 */
export function probeSandbox(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): Promise<SandboxSupport> {
  if (platform === 'darwin') {
    // Written and unit-tested, not run here (docs/sandbox.md); macOS has no pid namespace.
    if (executable(SANDBOX_EXEC)) return Promise.resolve({ ok: true, kind: 'sandbox-exec', bwrap: SANDBOX_EXEC, version: 'macOS' });
    return Promise.resolve({ ok: false, why: `${SANDBOX_EXEC} is missing`, fix: 'commands go through approvals as usual; see docs/sandbox.md' });
  }
  if (platform !== 'linux') return Promise.resolve({ ok: false, why: `no OS sandbox is available on ${platform}`, fix: 'commands go through approvals as usual; see docs/sandbox.md' });
  const bwrap = findBwrap(env);
  if (!bwrap) {
    const why = env.PATCHBAY_BWRAP ? `PATCHBAY_BWRAP (${env.PATCHBAY_BWRAP}) is not an executable file` : 'bubblewrap (bwrap) is not installed';
    return Promise.resolve({ ok: false, why, fix: INSTALL_FIX });
  }
  let p = probes.get(bwrap);
  if (!p) {
    p = probe(bwrap, env);
    probes.set(bwrap, p);
  }
  return p;
}

async function probe(bwrap: string, env: NodeJS.ProcessEnv): Promise<SandboxSupport> {
  const version = await run(bwrap, ['--version'], env);
  if (version.code !== 0) return { ok: false, why: `${bwrap} --version failed: ${version.text || `exit ${String(version.code)}`}`, fix: INSTALL_FIX };
  const tried = await run(bwrap, [...namespaceArgs(false), '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--', 'true'], env);
  if (tried.code !== 0) {
    const text = tried.text || `exit ${String(tried.code)}`;
    const userns = /namespace|permission|operation not permitted|setting up uid map/i.test(text);
    return { ok: false, why: `bubblewrap cannot create its namespaces here: ${text}`, fix: userns ? USERNS_FIX : INSTALL_FIX };
  }
  const m = /(\d+\.\d+(?:\.\d+)?)/.exec(version.text);
  return { ok: true, kind: 'bubblewrap', bwrap, version: m ? m[1] : version.text };
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; text: string }> {
  return new Promise((settle) => {
    let text = '';
    let done = false;
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const end = (code: number | null, extra?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      settle({ code, text: (extra ?? text).trim().split('\n').slice(0, 3).join(' ').slice(0, 300) });
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      end(null, `no answer within ${PROBE_TIMEOUT_MS / 1000} s`);
    }, PROBE_TIMEOUT_MS);
    timer.unref();
    for (const s of [child.stdout, child.stderr]) s.on('data', (b: Buffer) => (text.length < 4096 ? (text += b.toString('utf8')) : undefined));
    child.on('error', (e) => end(null, e.message));
    child.on('close', (code) => end(code));
  });
}

/** Forget what the probes found (a test that swaps the binary). */
export function forgetSandboxProbes(): void {
  probes.clear();
}

function namespaceArgs(network: boolean): string[] {
  // No --new-session: the command stays in the process group patchbay signals. An unprivileged
  // bwrap adds a user namespace on its own.
  return ['--die-with-parent', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', ...(network ? [] : ['--unshare-net'])];
}

export type PathKind = 'dir' | 'file' | 'missing';

function kindOf(p: string): PathKind {
  try {
    const st = statSync(p, { throwIfNoEntry: false });
    return !st ? 'missing' : st.isDirectory() ? 'dir' : 'file';
  } catch {
    return 'missing';
  }
}

/**
 * bwrap's arguments for a command under `policy`, run in `cwd`. Later mounts cover earlier
 * ones: everything read-only, a private /tmp, the writable folders, then the read-only ones
 * (and the writable folders inside those again), and the hidden ones over all of it. `kind`
 * tells what a path is (the file system's answer when not given); `seen`: more paths whose
 * folder under /tmp the command sees as it is, read-only, as it does `cwd`'s.
 */
export function bwrapArgs(policy: SandboxPolicy, cwd: string, kind: (p: string) => PathKind = kindOf, seen: readonly string[] = []): string[] {
  // One look per path: a path may be asked about several times below.
  const kinds = new Map<string, PathKind>();
  const look = (p: string): PathKind => kinds.get(p) ?? kinds.set(p, kind(p)).get(p)!;
  const args = [...namespaceArgs(policy.network), '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
  // A folder of the policy under /tmp (a workspace, a home there) is seen through the private
  // /tmp as it is, read-only: its parents are not made up, writable, in the private one.
  const inTmp = new Set<string>();
  for (const p of [...policy.writable, ...policy.readOnly, ...policy.hidden, cwd, ...seen.filter((a) => a.startsWith('/tmp/'))]) {
    const m = /^\/tmp\/[^/]+/.exec(resolve(p));
    if (m && look(m[0]) === 'dir') inTmp.add(m[0]);
  }
  for (const t of inTmp) args.push('--ro-bind', t, t);
  const writable = unique(policy.writable).filter((w) => look(w) === 'dir');
  for (const w of writable) args.push('--bind', w, w);
  const pinned = unique(policy.pinned ?? []).filter((p) => writable.some((w) => isUnder(p, w) && p !== w));
  for (const p of pinned) {
    const k = look(p);
    if (k !== 'missing') args.push(k === 'dir' ? '--bind' : '--ro-bind', p, p);
  }
  const inPinned = (r: string): boolean => pinned.some((p) => r !== p && look(p) === 'dir' && isUnder(r, p));
  // Only a read-only path inside a writable folder (or in the private /tmp but not in a folder
  // bound above) is bound again: elsewhere `--ro-bind / /` keeps it read-only already, and each
  // mount costs bwrap time (bench/sandbox.ts).
  const inTmpDir = (r: string): boolean => [...inTmp].some((t) => isUnder(r, t));
  const reopened = unique(policy.readOnly).filter((r) => writable.some((w) => isUnder(r, w)) || (isUnder(r, '/tmp') && !inTmpDir(r)));
  for (const r of reopened) {
    const k = look(r);
    // One not made yet (a `.patchbay/` the repository has not got) is not made up: bwrap would
    // create its mount point in the user's folder. What a command writes there later is a new
    // file to workspace trust, held back until the user trusts it (config/trust.ts).
    if (k !== 'missing') args.push('--ro-bind', r, r);
    else if (inPinned(r)) args.push('--tmpfs', r, '--remount-ro', r);
  }
  // A writable folder inside a read-only one (the memory folders in patchbay's config folder) is
  // bound again over it.
  for (const w of writable) if (reopened.some((r) => r !== w && look(r) !== 'missing' && isUnder(w, r))) args.push('--bind', w, w);
  for (const h of unique(policy.hidden)) {
    const k = look(h);
    if (k === 'dir') args.push('--tmpfs', h, '--remount-ro', h);
    else if (k === 'file') args.push('--ro-bind', '/dev/null', h);
  }
  args.push('--chdir', cwd);
  return args;
}

/** The command in the sandbox: `bwrap <policy> -- <command> <args>`, or `sandbox-exec -p <profile> <command> <args>` on macOS. */
export function sandboxArgv(support: Extract<SandboxSupport, { ok: true }>, policy: SandboxPolicy, cwd: string, argv: Argv): Argv {
  if (support.kind === 'sandbox-exec') return { command: support.bwrap, args: ['-p', sandboxExecProfile(policy), argv.command, ...argv.args] };
  // The program and the files it is given by absolute path (an MCP server's script) are seen as
  // they are, read-only, even under the private /tmp; a socket there stays out of reach.
  const seen = [argv.command, ...argv.args].filter((a) => a.startsWith('/tmp/') && regularFile(a));
  return { command: support.bwrap, args: [...bwrapArgs(policy, cwd, kindOf, seen), '--', argv.command, ...argv.args] };
}

function regularFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

function unique(paths: string[]): string[] {
  return [...new Set(paths.map((p) => resolve(p)))];
}

function isUnder(p: string, dir: string): boolean {
  return p === dir || p.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
}

/**
 * The macOS `sandbox-exec` profile for a policy (SBPL): reads allowed but for the hidden paths,
 * writes only in the writable folders (and the temp folders), none in the read-only ones, and no
 * network but loopback unless allowed. Written and unit-tested, not run here (docs/sandbox.md).
 */
export function sandboxExecProfile(policy: SandboxPolicy): string {
  const q = (p: string) => JSON.stringify(resolve(p));
  const lines = [
    '(version 1)',
    '(deny default)',
    '(allow process-exec)',
    '(allow process-fork)',
    '(allow signal (target same-sandbox))',
    '(allow sysctl-read)',
    '(allow mach-lookup)',
    '(allow ipc-posix-shm)',
    '(allow file-read*)',
  ];
  for (const h of unique(policy.hidden)) lines.push(`(deny file-read* (subpath ${q(h)}))`);
  const writes = [...unique(policy.writable), '/private/tmp', '/private/var/folders'].map((w) => `(subpath ${q(w)})`);
  lines.push(`(allow file-write* ${writes.join(' ')} (literal "/dev/null") (literal "/dev/tty"))`);
  for (const r of unique(policy.readOnly)) lines.push(`(deny file-write* (subpath ${q(r)}))`);
  for (const h of unique(policy.hidden)) lines.push(`(deny file-write* (subpath ${q(h)}))`);
  if (policy.network) lines.push('(allow network*)');
  else lines.push('(allow network* (remote ip "localhost:*"))', '(allow network* (local ip "localhost:*"))');
  return `${lines.join('\n')}\n`;
}

/**
 * When a failed command's output looks like the sandbox stopped it, why (for the model): a
 * read-only file system, or no network. Undefined otherwise.
 */
export function sandboxFailure(output: string, policy: SandboxPolicy): string | undefined {
  if (/read-only file system|EROFS/i.test(output)) {
    return `the sandbox keeps everything read-only but ${policy.writable.length ? policy.writable.join(', ') : 'nothing'} and /tmp (patchbay's config and .patchbay/ are read-only everywhere)`;
  }
  if (
    !policy.network &&
    /network is unreachable|ENETUNREACH|could not resolve host|temporary failure in name resolution|name or service not known|EAI_AGAIN|getaddrinfo|connection refused|ECONNREFUSED/i.test(output)
  ) {
    return 'the sandbox has no network (only its own loopback, which reaches no service outside it)';
  }
  if (/no such file or directory|permission denied/i.test(output) && policy.hidden.some((h) => output.includes(h))) {
    return `the sandbox hides ${policy.hidden.filter((h) => output.includes(h)).join(', ')}`;
  }
  return undefined;
}

/** Whether and how the commands of one set of folders run sandboxed (runtime/sandbox.ts makes it). */
export type SandboxPlan =
  | { kind: 'sandboxed'; policy: SandboxPolicy; support: Extract<SandboxSupport, { ok: true }>; autoAllow: boolean; wrap(argv: Argv, cwd: string): Argv }
  /** Off by config (`enabled: false`), or `auto` where it cannot run: commands run as before, through approvals. */
  | { kind: 'off'; why: string }
  /** `enabled: true` where it cannot run: commands are refused unless the user allows one unsandboxed. */
  | { kind: 'refuse'; why: string };
