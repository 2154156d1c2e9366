/**
 * `patchbay models list | pull [model] | rm <model>`: the local models (api "local") the
 * config knows, and the GGUF files cached under PATCHBAY_HOME/models.
 *
 * A model is named as in the config (`qwen2.5-coder-1.5b`, `local/qwen2.5-coder-1.5b`) or
 * given as a URI (`hf:…`, `https://…`); `pull` without one fetches the default local model.
 */
import { formatConfigError, loadConfig, patchbayHome } from '../config/load.js';
import { describeDownload, ensureModel, listCachedModels, modelFileState, removeCachedModel, resolveModelUri, type DownloadProgress } from '../peers/llm/local-models.js';
import { withBar } from './chat-render.js';
import { resolveModels } from '../peers/llm/models.js';
import type { ModelEntry } from '../shapes/llm.js';
import { errorMessage, logToStderr } from '../util/log.js';
import { commandHelp, usageError } from './help.js';
import { parseFlags } from './flags.js';

const USAGE = commandHelp('models')!.usage;

export async function runModels(args: string[]): Promise<void> {
  try {
    await models(args);
  } catch (e) {
    // A bad URI or path in the config or PATCHBAY_LOCAL_MODEL: one line, not a stack.
    process.stderr.write(`patchbay models: ${errorMessage(e)}\n`);
    process.exitCode = 1;
  }
}

async function models(args: string[]): Promise<void> {
  const { flags, positional, error } = parseFlags(args, ['config-file']);
  const [sub, name] = positional;
  if (error) return usageError('models', error);
  if (!sub || !['list', 'pull', 'rm'].includes(sub) || (sub === 'rm' && !name)) {
    process.stderr.write(USAGE);
    process.exitCode = 2;
    return;
  }
  logToStderr(false);
  const env = process.env;
  const home = patchbayHome(env);
  const { config, errors } = loadConfig({ roots: [process.cwd()], env, configFile: flags['config-file'] });
  for (const e of errors) process.stderr.write(`config: ${formatConfigError(e)}\n`);
  const local = (await resolveModels(config, env)).filter((m) => m.api === 'local' && m.local);

  if (sub === 'list') return list(local, home);
  if (sub === 'rm') {
    const uri = uriOf(local, name);
    if (uri && resolveModelUri(uri, home).kind === 'file') {
      process.stderr.write(`"${name}" is your own file (${uri}); patchbay only removes what it downloaded.\n`);
      process.exitCode = 1;
      return;
    }
    const removed = removeCachedModel(home, uri ?? name);
    if (!removed.length) {
      process.stderr.write(`No downloaded file for "${name}" under ${home}/models.\n`);
      process.exitCode = 1;
      return;
    }
    for (const p of removed) process.stdout.write(`removed ${p}\n`);
    return;
  }
  const entry = name ? local.find((m) => matches(m, name)) : (local.find((m) => m.provider === 'local') ?? local[0]);
  const source = entry?.local ?? (name && isUri(name) ? { model: name } : undefined);
  if (!source) {
    process.stderr.write(`Unknown local model "${name}". Configured: ${local.map((m) => m.id).join(', ') || 'none'}.\n`);
    process.exitCode = 1;
    return;
  }
  const bar = new ProgressBar(resolveModelUri(source.model, home).name);
  try {
    const path = await ensureModel({ uri: source.model, sha256: source.sha256 }, home, { onProgress: (p) => bar.update(p) });
    bar.done();
    process.stdout.write(`${path}\n`);
  } catch (e) {
    bar.done();
    process.stderr.write(`Download failed: ${errorMessage(e)}\n`);
    process.exitCode = 1;
  }
}

function list(local: ModelEntry[], home: string): void {
  const cached = listCachedModels(home);
  const out: string[] = ['Local models (config):'];
  for (const m of local) {
    const f = modelFileState(m.local!.model, home);
    const state =
      f.kind === 'ready' ? `ready: ${f.path}` : f.kind === 'missing' ? `missing file ${f.path}` : f.kind === 'remote' ? `not downloaded (patchbay models pull ${m.id})` : `unusable: ${f.reason}`;
    out.push(`  ${m.id}  ${m.local!.model}  ${state}`);
  }
  if (!local.length) out.push('  none');
  out.push(`Files in ${home}/models:`);
  for (const c of cached) out.push(`  ${c.name}  ${(c.bytes / 1e6).toFixed(1)} MB${c.partial ? '  (partial: pull again to resume)' : ''}`);
  if (!cached.length) out.push('  none');
  process.stdout.write(`${out.join('\n')}\n`);
}

function matches(m: ModelEntry, name: string): boolean {
  return m.id === name || m.id.slice(m.provider.length + 1) === name || m.local?.model === name;
}

function uriOf(local: ModelEntry[], name: string): string | undefined {
  return local.find((m) => matches(m, name))?.local?.model;
}

function isUri(s: string): boolean {
  return /^(hf|huggingface|https?):/i.test(s);
}

/** One line on stderr: `Downloading name: 45% [#########           ] (500 MB of 1100 MB)  12.3 MB/s`. */
class ProgressBar {
  private readonly tty = process.stderr.isTTY === true;
  private started = Date.now();
  private last = 0;
  private lastPct = -1;

  constructor(private readonly name: string) {}

  update(p: DownloadProgress): void {
    const now = Date.now();
    if (p.received === p.resumedFrom) this.started = now;
    const pct = p.total ? Math.floor((100 * p.received) / p.total) : -1;
    // A TTY redraws at most 10 times a second; a log gets a line every tenth (every 5 s when the size is unknown).
    const final = p.received === p.total;
    const due = this.tty ? now - this.last >= 100 : pct >= 0 ? Math.floor(pct / 10) !== Math.floor(this.lastPct / 10) : now - this.last >= 5_000;
    if (!due && !final) return;
    this.last = now;
    this.lastPct = pct;
    const secs = Math.max(0.001, (now - this.started) / 1000);
    const speed = `${((p.received - p.resumedFrom) / 1e6 / secs).toFixed(1)} MB/s`;
    const resumed = p.resumedFrom ? ` (resumed at ${(p.resumedFrom / 1e6).toFixed(1)} MB)` : '';
    const line = `${withBar(describeDownload(this.name, p))}  ${speed}${resumed}`;
    process.stderr.write(this.tty ? `\r\x1b[2K${line}` : `${line}\n`);
  }

  done(): void {
    if (this.tty && this.last) process.stderr.write('\n');
  }
}
