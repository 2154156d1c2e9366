/** Where patchbay keeps its data and where the user's config file is; every layer may ask. */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

/** patchbay's data directory: `PATCHBAY_HOME`, else `~/.cache/patchbay`. */
export function patchbayHome(env: NodeJS.ProcessEnv, homeDir?: string): string {
  if (env.PATCHBAY_HOME) return resolve(env.PATCHBAY_HOME);
  return join(homeDir ?? homedir(), '.cache', 'patchbay');
}

/** The user config file: `$XDG_CONFIG_HOME/patchbay/config.json`, else `~/.config/patchbay/config.json`. */
export function userConfigPath(env: NodeJS.ProcessEnv, homeDir?: string): string {
  return join(userConfigDir(env, homeDir), 'config.json');
}

/** The user config directory: `$XDG_CONFIG_HOME/patchbay`, else `~/.config/patchbay` (rules, skills, commands, agents live here too). */
export function userConfigDir(env: NodeJS.ProcessEnv, homeDir?: string, app = 'patchbay'): string {
  const xdg = env.XDG_CONFIG_HOME;
  // The XDG spec says relative values are invalid and must be ignored.
  const base = xdg && isAbsolute(xdg) ? xdg : join(homeDir ?? homedir(), '.config');
  return join(base, app);
}
