/**
 * `patchbay login [provider] [--method m]` and `patchbay login --logout <provider>`: a provider
 * login in the terminal, over the same ProviderLogins the editor's `providers/login` drives. It is
 * what an ACP client runs for patchbay's "terminal" auth method; a running `patchbay acp` then
 * takes the stored login (Workspace.refreshLogins). No Workspace here: a login needs the config,
 * the secret store and the login index only, not the chat store or the peers.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { formatConfigError, patchbayHome } from '../config/load.js';
import { BUILTIN_PROVIDER_IDS, keyOverridingLogin, type ProviderConfig } from '../peers/llm/index.js';
import { browsableUrl, browserCommand } from '../peers/mcp/oauth-browser.js';
import { LoginFailedError, LoginInputError, ProviderLogins, type Credential, type LoginStep } from '../runtime/provider-logins.js';
import { providerAuth, providerAuthSummary } from '../runtime/provider-status.js';
import { loadWorkspaceConfig } from '../runtime/workspace-config.js';
import { openSecretStore } from '../util/secrets.js';
import { errorMessage, logToFile, logToStderr } from '../util/log.js';
import { ensurePrivateDir } from '../util/private-dir.js';
import { Term } from './chat-term.js';
import { parseFlags } from './flags.js';
import { usageError } from './help.js';
import { InputCancelled, StdinAnswers } from './login-input.js';

const METHODS = ['browser', 'paste', 'device', 'api-key'];

export async function runLogin(args: string[]): Promise<void> {
  const { flags, positional, error } = parseFlags(args, ['method', 'config-file', 'logout']);
  if (error) return usageError('login', error);
  if (positional.length > 1) return usageError('login', `expected one provider, got ${positional.join(' ')}`);
  if (flags.logout !== undefined && (positional.length || flags.method !== undefined)) return usageError('login', '--logout <provider> takes no other provider or --method');
  if (flags.method !== undefined && !METHODS.includes(flags.method)) return usageError('login', `--method must be one of ${METHODS.join(', ')}`);

  logToStderr(false);
  const env = process.env;
  const home = patchbayHome(env);
  ensurePrivateDir(home);
  logToFile(join(home, 'logs', 'login.log'));
  const { config, errors } = loadWorkspaceConfig({ roots: [process.cwd()], env, configFile: flags['config-file'] });
  for (const e of errors) process.stderr.write(`config: ${formatConfigError(e)}\n`);
  const session = new LoginSession(config.providers, env, home);
  try {
    await session.logins.load();
    if (flags.logout !== undefined) await session.logout(flags.logout);
    else await session.login(positional[0], flags.method);
  } catch (e) {
    if (e instanceof InputCancelled) return session.cancelled();
    process.stderr.write(`patchbay login: ${errorMessage(e)}\n`);
    process.exitCode = e instanceof UsageProblem ? 2 : 1;
  } finally {
    session.close();
  }
}

/** Bad arguments found once the config is known (an unknown provider, a method it does not offer). */
class UsageProblem extends Error {}

class LoginSession {
  readonly logins: ProviderLogins;
  private readonly answers = new StdinAnswers();
  private readonly term = new Term();
  /** The last failure ProviderLogins reported (a browser or device login fails in the background). */
  private problem: string | undefined;
  private onChange: ((id: string) => void) | undefined;
  private readonly onSigint = (): void => {
    this.cancelled();
    this.close();
    process.exit(130);
  };

  constructor(
    private readonly providers: Record<string, ProviderConfig>,
    private readonly env: NodeJS.ProcessEnv,
    home: string,
  ) {
    this.logins = new ProviderLogins({
      store: openSecretStore({ env, home }),
      indexFile: join(home, 'logins.json'),
      providers: () => this.providers,
      known: () => this.known(),
      overriddenBy: (id) => {
        const winner = keyOverridingLogin(id, this.providers[id], env);
        return winner?.envVar ? `the ${winner.envVar} environment variable` : winner ? 'a "key" in the config' : undefined;
      },
      changed: async (id) => this.onChange?.(id),
      notice: (type, message) => {
        if (type === 'error') this.problem = message;
        else process.stderr.write(`${type}: ${message}\n`);
      },
    });
    // In cooked mode the terminal turns Ctrl-C into SIGINT: the running login is cancelled, its listener closed.
    process.once('SIGINT', this.onSigint);
  }

  private known(): string[] {
    return [...new Set([...BUILTIN_PROVIDER_IDS, ...Object.keys(this.providers)])];
  }

  async logout(id: string): Promise<void> {
    const had = this.logins.credential(id) !== undefined;
    try {
      await this.logins.logout(id);
    } catch (e) {
      if (e instanceof LoginInputError) throw new UsageProblem(`${e.message}; known providers: ${this.known().join(', ')}`);
      throw e;
    }
    this.say(had ? `Logged out of ${id}.` : `${id} had no stored login; nothing to do.`);
  }

  async login(given: string | undefined, method: string | undefined): Promise<void> {
    const id = given ?? (await this.pickProvider());
    if (!this.known().includes(id)) throw new UsageProblem(`Unknown provider "${id}"; known providers: ${this.known().join(', ')}`);
    const offered = this.logins.methods(id);
    if (!offered.length) throw new UsageProblem(`Provider "${id}" runs on this machine and needs no login`);
    if (method !== undefined && !offered.some((m) => m.key === method)) {
      throw new UsageProblem(`Provider "${id}" offers no "${method}" login (it offers: ${offered.map((m) => m.key).join(', ')})`);
    }
    const before = this.logins.credential(id);
    let step = await this.logins.login(id, method);
    if (step.kind === 'choose') step = await this.logins.login(id, await this.pickMethod(step.methods));
    await this.follow(id, step, before);
    const auth = providerAuth(id, this.providers[id], [], this.env, this.logins.credential(id));
    this.say(`Logged in to ${id} (${providerAuthSummary(auth)}); stored in ${this.logins.storeKind}.`);
  }

  private async follow(id: string, step: LoginStep, before: Credential | undefined): Promise<void> {
    switch (step.kind) {
      case 'done':
        return;
      case 'input': {
        const key = (await this.ask(`${step.fields[0]?.label ?? 'API key'} for ${id} (not shown): `, true))?.trim();
        if (!key) throw new LoginFailedError('No API key entered; nothing was stored');
        return this.follow(id, await this.logins.input(id, { 'api-key': key }), before);
      }
      case 'authorize': {
        this.say(`${step.message}\n\n  ${step.url}\n`);
        await this.openBrowser(step.url);
        if (!step.fields?.length) return this.waitForLogin(id, before, 'Waiting for the login in the browser… (Ctrl-C cancels)');
        const code = (await this.ask(`${step.fields[0].label}: `, false))?.trim();
        if (!code) throw new LoginFailedError('No code entered; nothing was stored');
        return this.follow(id, await this.logins.input(id, { code }), before);
      }
      case 'deviceCode':
        this.say(`Open ${step.url} and enter the code\n\n  ${step.code}\n\n${step.message}`);
        return this.waitForLogin(id, before, 'Waiting for the code to be entered… (Ctrl-C cancels)');
      case 'choose':
        throw new LoginFailedError('The provider asked for a method twice');
    }
  }

  /** Until the background login stores a new credential, or fails (its reason is the error). */
  private async waitForLogin(id: string, before: Credential | undefined, waiting: string): Promise<void> {
    this.term.status(waiting);
    try {
      await new Promise<void>((resolve, reject) => {
        this.onChange = (changed) => {
          if (changed !== id) return;
          const now = this.logins.credential(id);
          if (now && now !== before) resolve();
          else if (this.problem) reject(new LoginFailedError(this.problem));
        };
      });
    } finally {
      this.onChange = undefined;
      this.term.clearStatus();
    }
  }

  private async pickProvider(): Promise<string> {
    const ids = this.known().filter((id) => this.logins.methods(id).length);
    this.say('Providers:');
    ids.forEach((id, i) => {
      const auth = providerAuth(id, this.providers[id], [], this.env, this.logins.credential(id));
      this.say(`  ${String(i + 1).padStart(2)}) ${id}: ${providerAuthSummary(auth)}`);
    });
    return this.choose(`Log in to which provider? [1-${ids.length}]: `, ids);
  }

  private async pickMethod(methods: Array<{ key: string; label: string }>): Promise<string> {
    this.say('Login methods:');
    methods.forEach((m, i) => this.say(`  ${i + 1}) ${m.label} (${m.key})`));
    return this.choose(
      `Which method? [1-${methods.length}]: `,
      methods.map((m) => m.key),
    );
  }

  /** A number from the list, or the name itself; asked again until it is one. */
  private async choose(question: string, options: string[]): Promise<string> {
    for (;;) {
      const a = (await this.ask(question, false))?.trim();
      if (a === undefined) throw new LoginFailedError('No answer on stdin');
      const n = Number(a);
      const picked = Number.isInteger(n) && n >= 1 && n <= options.length ? options[n - 1] : options.find((o) => o === a);
      if (picked) return picked;
      this.say(`"${a}" is not one of the choices.`);
    }
  }

  private async ask(question: string, secret: boolean): Promise<string | undefined> {
    process.stdout.write(question);
    const answer = secret ? await this.answers.secret() : await this.answers.line();
    // A secret's Enter was not echoed; a piped answer never is: end the prompt's line either way.
    if (secret || !process.stdin.isTTY) process.stdout.write('\n');
    return answer;
  }

  /** Best effort ($BROWSER, else open / xdg-open): the URL is printed anyway. */
  private async openBrowser(url: string): Promise<void> {
    if (!browsableUrl(url)) return;
    const [cmd, ...args] = browserCommand(url, this.env, process.platform);
    await new Promise<void>((resolve) => {
      try {
        const child = spawn(cmd, args, { detached: true, stdio: 'ignore', windowsHide: true });
        child.once('spawn', () => (child.unref(), resolve()));
        child.once('error', () => resolve());
      } catch {
        resolve();
      }
    });
  }

  private say(text: string): void {
    this.term.outLine(text);
  }

  cancelled(): void {
    this.term.clearStatus();
    process.stderr.write('\nLogin cancelled; nothing was stored.\n');
    process.exitCode = 130;
  }

  close(): void {
    process.off('SIGINT', this.onSigint);
    this.term.clearStatus();
    this.answers.close();
    this.logins.dispose();
  }
}
