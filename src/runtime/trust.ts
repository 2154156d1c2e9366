/**
 * `/trust`: the user trusts the workspace folders whose `.patchbay/config.json` settings were
 * held back (src/config/held-back.ts), and what the running session can take on at once is
 * applied at once; the rest is named as applying after a restart.
 */
import { heldBack, type WorkspaceConfigTrust } from '../config/load.js';
import { formatHeldSetting, heldBackMessage, type HeldSetting } from '../config/held-back.js';
import { recordTrust } from '../config/trust.js';
import type { WorkspaceConfig } from './workspace-config.js';

/** What `/trust` needs from the session. */
export interface TrustTarget {
  home: string;
  workspaces: WorkspaceConfigTrust[];
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
  if (!pending.length) {
    if (!t.workspaces.length) return 'This workspace has no .patchbay/config.json: there is nothing to trust.';
    return t.workspaces.map((w) => `${w.root} is ${w.state === 'trusted' ? 'trusted' : 'not trusted, but its config holds nothing that needs trust'}.`).join('\n');
  }
  // The hash of the content the user was shown: if the file changed since, it stays untrusted.
  for (const w of pending) recordTrust(t.home, w.root, w.sha256);
  const loaded = t.reload();
  t.apply(loaded);
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

  const lines = [`Trusted ${pending.map((w) => w.root).join(', ')}.`];
  if (now.length) lines.push(`Applied now: ${now.join(', ')}.`);
  if (later.length) lines.push(`Applies after you restart patchbay: ${later.join(', ')}.`);
  return lines.join('\n');
}
