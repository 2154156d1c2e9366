/**
 * `/trust`: the user trusts the workspace folders whose `.patchbay/config.json` settings were
 * held back (src/config/held-back.ts), and what the running session can take on at once is
 * applied at once; the rest is named as applying after a restart. A trusted folder whose other
 * covered files (agent files, skills, commands, hook scripts: config/trusted-files.ts) are new or
 * changed since is trusted again for them as they are now.
 */
import { heldBack, type WorkspaceConfigTrust } from '../config/load.js';
import { formatHeldSetting, heldBackMessage, type HeldSetting } from '../config/held-back.js';
import { recordTrust, trustRecord } from '../config/trust.js';
import { changedFiles } from '../config/trusted-files.js';
import { escapeControlChars } from '../util/text.js';
import type { WorkspaceConfig } from './workspace-config.js';

/** What `/trust` needs from the session. */
export interface TrustTarget {
  home: string;
  workspaces: WorkspaceConfigTrust[];
  /** The workspace folders (a folder without a config file can have changed agent files too). */
  roots: string[];
  /** The folder's covered files now (config/trusted-files.ts `coveredFilesNow`). */
  coveredFiles(root: string): Promise<Record<string, string>>;
  /** Loads the config again (after trust is recorded). */
  reload(): WorkspaceConfig;
  /** Takes the reloaded config (approvals, disabled tools, providers read it from now on). */
  apply(loaded: WorkspaceConfig): void;
  /** Lets the peers take up what they can live; returns the config paths they applied. */
  reconfigurePeers(): string[][];
  /** Re-resolves models (provider URLs and keys changed) and tells the editor. */
  modelsChanged(providers: string[]): Promise<void>;
}

/** Settings the running session takes on live; the others are read only at start. */
function appliesLive(path: string[]): boolean {
  // Rules and AGENTS.md are read again at the next request whenever the config changed (runtime/instructions.ts).
  return path[0] === 'toolCall' || path[0] === 'disabledTools' || path[0] === 'providers' || path[0] === 'rules' || path[0] === 'includeParentAgentsFiles';
}

export async function trustHeldBack(t: TrustTarget): Promise<string> {
  const pending = heldBack(t);
  // Folders trusted before whose other files are new or changed since (issue 31).
  const again: Array<{ root: string; sha256: string; files: Record<string, string>; changed: string[] }> = [];
  for (const root of t.roots) {
    const record = trustRecord(t.home, root);
    if (!record || pending.some((w) => w.root === root)) continue;
    const files = await t.coveredFiles(root);
    const changed = changedFiles(files, record.files);
    if (changed.length) again.push({ root, sha256: record.sha256, files, changed });
  }
  if (!pending.length && !again.length) {
    if (!t.workspaces.length) return 'This workspace has no .patchbay/config.json: there is nothing to trust.';
    return t.workspaces.map((w) => `${w.root} is ${w.state === 'trusted' ? 'trusted' : 'not trusted, but its config holds nothing that needs trust'}.`).join('\n');
  }
  // The hash of the content the user was shown: if the file changed since, it stays untrusted.
  // The other files as they are now: the notices named them, their content is what runs from here on.
  for (const w of pending) recordTrust(t.home, w.root, w.sha256, await t.coveredFiles(w.root));
  for (const a of again) recordTrust(t.home, a.root, a.sha256, a.files);
  const loaded = t.reload();
  t.apply(loaded);
  const againLines = again.map((a) => `Trusted ${a.root} again, for its files new or changed since: ${a.changed.map((f) => escapeControlChars(f)).join(', ')}.`);
  if (!pending.length) return againLines.join('\n');
  const still = heldBack(loaded);
  if (still.length) return `The file changed since patchbay loaded it, so it is still held back. Look at it again:\n${still.map(heldBackMessage).join('\n')}`;

  const held: HeldSetting[] = pending.flatMap((w) => w.settings);
  const now: string[] = [];
  const later: string[] = [];
  const appliedByPeers = new Set(t.reconfigurePeers().map((p) => JSON.stringify(p)));
  const providers = new Set<string>();
  for (const h of held) {
    // The path as written: names may hold dots (`providers["my.prov"]`, `mcpServers["a.b"]`).
    const [top, name] = h.path;
    if (appliedByPeers.has(JSON.stringify(h.path))) now.push(formatHeldSetting(h));
    else if (appliesLive(h.path)) {
      now.push(formatHeldSetting(h));
      if (top === 'providers') providers.add(name);
    } else later.push(formatHeldSetting(h));
  }
  if (providers.size) await t.modelsChanged([...providers]);

  const lines = [`Trusted ${pending.map((w) => w.root).join(', ')}.`, ...againLines];
  if (now.length) lines.push(`Applied now: ${now.join(', ')}.`);
  if (later.length) lines.push(`Applies after you restart patchbay: ${later.join(', ')}.`);
  return lines.join('\n');
}
