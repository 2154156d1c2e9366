/**
 * The folders an ACP session works in (issue 28, points 10 and 11; issue 30): its `cwd` and its
 * `additionalDirectories` (ACP `SessionAdditionalDirectoriesCapabilities`, on `session/new`,
 * `session/load` and `session/resume`), each checked as `cwd` is: absolute, an existing
 * directory, and neither `/` nor the user's home folder or a folder containing it (a session
 * there would put every file the user has inside its workspace, where reads need no asking).
 * They select the session's workspace (session-workspaces.ts); `workspaceFolders` gives that
 * workspace's folders.
 */
import { mkdirSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve, sep } from 'node:path';
import { RequestError } from '@agentclientprotocol/sdk';
import { patchbayHome } from '../../util/locations.js';

/** What a session asked for, checked and resolved. */
export interface SessionRootSet {
  /** The session's `cwd` (resolved), the base of its relative paths. */
  cwd: string;
  /** Its `additionalDirectories` (resolved, in the client's order, duplicates and `cwd` left out). */
  additional: string[];
}

/** The request fields that name a session's folders (new, load and resume all have them). */
export interface SessionRootParams {
  cwd: string;
  additionalDirectories?: string[] | null;
}

/**
 * The folders of a session request, each checked (invalid params naming the field otherwise).
 * `home` is the user's home folder (the environment's `HOME`, else the OS's).
 */
export function sessionRoots(params: SessionRootParams, home: string = homedir()): SessionRootSet {
  const cwd = checkedFolder(params.cwd, 'cwd', home);
  const additional: string[] = [];
  for (const [i, raw] of (params.additionalDirectories ?? []).entries()) {
    const dir = checkedFolder(raw, `additionalDirectories[${i}]`, home);
    if (dir !== cwd && !additional.includes(dir)) additional.push(dir);
  }
  return { cwd, additional };
}

/**
 * The folder the workspace starts in when a request needs one before any session (`session/list`,
 * `session/delete`, `logout`): the agent's own folder `here`, unless a session could not use it
 * (`/`, the home folder, a folder holding it: where a desktop app often starts its agents); then
 * an empty folder of patchbay's own, so the start-up folder never puts those inside the workspace.
 */
export function agentFolder(here: string, env: NodeJS.ProcessEnv, home: string = homedir()): string {
  try {
    return checkedFolder(here, 'cwd', home);
  } catch {
    const dir = join(patchbayHome(env, home), 'acp-no-session');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  }
}

function checkedFolder(raw: string, field: string, home: string): string {
  const data = { [field]: raw };
  if (!isAbsolute(raw)) throw RequestError.invalidParams(data, `${field} must be an absolute path, got ${JSON.stringify(raw)}`);
  const path = resolve(raw);
  // A session's tools run and resolve paths in its folders: one that is not there is the client's mistake to hear of.
  if (!isDirectory(path)) throw RequestError.invalidParams(data, `${field} ${path} is not a directory`);
  const real = realOf(path);
  if (real === sep || path === sep)
    throw RequestError.invalidParams(data, `${field} ${path} is the root of the file system: open a project folder instead (every file on the machine would be inside the workspace)`);
  const homes = new Set([resolve(home), realOf(resolve(home))]);
  if (homes.has(path) || homes.has(real))
    throw RequestError.invalidParams(data, `${field} ${path} is your home folder: open a project folder instead (every file you have would be inside the workspace)`);
  // A folder above home (`/home`, `/Users`) holds every file the user has just as home does.
  const holder = [...homes].find((h) => within(path, h) || within(real, h));
  if (holder) throw RequestError.invalidParams(data, `${field} ${path} contains your home folder ${holder}: open a project folder instead (every file you have would be inside the workspace)`);
  return path;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function realOf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * The workspace folders for these sessions' folders: the first one's `cwd` first, always
 * (relative paths resolve in it), then every other folder of theirs, each once, those inside
 * another one left out (they are inside it already).
 */
export function workspaceFolders(sessions: readonly SessionRootSet[]): string[] {
  const dirs = sessions.flatMap((s) => [s.cwd, ...s.additional]);
  if (!dirs.length) return [];
  const [first, ...others] = dirs as [string, ...string[]];
  const rest = [...new Set(others)].filter((dir) => !within(first, dir));
  return [first, ...rest.filter((dir) => !rest.some((other) => other !== dir && within(other, dir)))];
}

function within(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}
