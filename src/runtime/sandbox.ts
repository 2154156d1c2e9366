/**
 * A workspace's sandbox: the `sandbox` config (config/sandbox.ts) and the folders of a chat turned
 * into the policy its commands run under (util/sandbox.ts), and the line `doctor` shows.
 *
 *   writable:  the chat's folders, the memory folders when memory is on, `sandbox.writable`
 *              (and a private /tmp, which util/sandbox.ts always gives);
 *   read-only: patchbay's config folder and `--config-file`, each folder's `.patchbay/` and
 *              `.eca/`, `.git/hooks` and `.git/config` (code that runs later, outside the sandbox);
 *   hidden:    HIDDEN_DEFAULT, HIDDEN_SYSTEM (host sockets), patchbay's home (tokens, the store,
 *              logs), `sandbox.hidden`.
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import type { Config } from '../config/schema.js';
import type { SandboxConfig } from '../config/sandbox.js';
import { memoryDirs } from '../core/memory/dirs.js';
import { memorySettings } from '../core/memory/settings.js';
import { patchbayHome, userConfigDir } from '../util/locations.js';
import { logger } from '../util/log.js';
import { probeSandbox, sandboxArgv, type SandboxPlan, type SandboxPolicy, type SandboxSupport } from '../util/sandbox.js';

const log = logger('sandbox');

/** Paths no sandboxed command can read, besides patchbay's home (docs/sandbox.md keeps the list). */
export const HIDDEN_DEFAULT = [
  '~/.ssh',
  '~/.aws',
  '~/.gnupg',
  '~/.config/gcloud',
  '~/.azure',
  '~/.kube',
  '~/.docker',
  '~/.netrc',
  '~/.git-credentials',
  '~/.password-store',
  '~/.config/gh',
  '~/.cache/eca',
] as const;

/**
 * Sockets of services on the host, which the network namespace does not cut off (a socket on a
 * read-only file system still connects): the user's session bus, agents and runtime folder, the
 * system bus, container engines. Plus `$XDG_RUNTIME_DIR` and `$SSH_AUTH_SOCK` wherever they are.
 */
export const HIDDEN_SYSTEM = ['/run/user', '/run/dbus', '/run/docker.sock', '/run/podman', '/run/containerd'] as const;

export interface SandboxHost {
  env: NodeJS.ProcessEnv;
  homeDir?: string;
  config(): Config;
  /** The CLI's `--config-file`, read-only like the user's config folder. */
  configFile?: string;
  platform?: NodeJS.Platform;
}

export class WorkspaceSandbox {
  private announced = false;

  constructor(private readonly host: SandboxHost) {}

  private settings(): Required<Pick<SandboxConfig, 'network' | 'autoAllow'>> & SandboxConfig {
    const s = this.host.config().sandbox ?? {};
    return { ...s, network: s.network ?? false, autoAllow: s.autoAllow ?? true };
  }

  private home(): string {
    return this.host.homeDir ?? homedir();
  }

  support(): Promise<SandboxSupport> {
    return probeSandbox(this.host.env, this.host.platform);
  }

  /** The policy for commands of a chat with these folders. */
  policy(roots: readonly string[]): SandboxPolicy {
    const s = this.settings();
    const env = this.host.env;
    const home = this.home();
    const expand = (p: string, base?: string) => (p === '~' ? home : p.startsWith('~/') ? join(home, p.slice(2)) : isAbsolute(p) || !base ? resolve(p) : resolve(base, p));
    const config = this.host.config();
    const memory = memorySettings(config).enabled ? memoryDirs(roots, env, this.host.homeDir).map((d) => d.dir) : [];
    const extra = (s.writable ?? []).flatMap((w) => (w.startsWith('~') || isAbsolute(w) ? [expand(w)] : roots.map((r) => expand(w, r))));
    // The home folder too, which only matters where it is under /tmp (util/sandbox.ts).
    const readOnly = [home, userConfigDir(env, this.host.homeDir), ...(this.host.configFile ? [resolve(this.host.configFile)] : [])];
    for (const r of roots) readOnly.push(join(r, '.patchbay'), join(r, '.eca'), join(r, '.git', 'hooks'), join(r, '.git', 'config'));
    const sockets = [env.XDG_RUNTIME_DIR, env.SSH_AUTH_SOCK].filter((p): p is string => !!p && isAbsolute(p));
    const hidden = [...HIDDEN_DEFAULT.map((h) => expand(h)), ...HIDDEN_SYSTEM, ...sockets, patchbayHome(env, this.host.homeDir), ...(s.hidden ?? []).map((h) => expand(h, roots[0]))];
    // `.git` pinned: renamed, it could be rebuilt with hooks and a config that run on the host's next `git`.
    return { writable: [...roots, ...memory, ...extra], readOnly, hidden, network: s.network, pinned: roots.map((r) => join(r, '.git')) };
  }

  /** Whether and how commands of a chat with these folders run sandboxed. */
  async plan(roots: readonly string[]): Promise<SandboxPlan> {
    const s = this.settings();
    const enabled = s.enabled ?? 'auto';
    if (enabled === false) return { kind: 'off', why: 'sandbox.enabled is false' };
    const support = await this.support();
    if (!support.ok) {
      const why = `commands cannot be sandboxed here: ${support.why}. To fix it: ${support.fix}`;
      return enabled === true ? { kind: 'refuse', why: `sandbox.enabled is true but ${why}` } : { kind: 'off', why };
    }
    const policy = this.policy(roots);
    return { kind: 'sandboxed', policy, support, autoAllow: s.autoAllow, wrap: (argv, cwd) => sandboxArgv(support, policy, cwd, argv) };
  }

  /** Says once, in the log, when `auto` finds no sandbox (doctor says it each time). */
  async announce(roots: readonly string[]): Promise<void> {
    if (this.announced) return;
    this.announced = true;
    const plan = await this.plan(roots);
    if (plan.kind === 'sandboxed') log.info(`commands run in ${plan.support.kind} ${plan.support.version}, network ${plan.policy.network ? 'on' : 'off'}`);
    else log.warn(`sandbox off: ${plan.why}`);
  }

  /** `doctor`'s line: `Sandbox: bubblewrap 0.8.0, network off, writable: <roots>`, or why it is off. */
  async doctorLine(roots: readonly string[]): Promise<string> {
    const plan = await this.plan(roots);
    if (plan.kind === 'sandboxed') {
      const extra = plan.policy.writable.length > roots.length ? ` (and ${plan.policy.writable.slice(roots.length).join(', ')})` : '';
      return `Sandbox: ${plan.support.kind} ${plan.support.version}, network ${plan.policy.network ? 'on' : 'off'}, writable: ${roots.join(', ') || '(no folders)'}${extra}, autoAllow ${plan.autoAllow ? 'on' : 'off'}`;
    }
    return plan.kind === 'refuse' ? `Sandbox: unavailable, commands are refused: ${plan.why}` : `Sandbox: off: ${plan.why}`;
  }
}
