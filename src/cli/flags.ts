// Its own module, not main.ts: the subcommands main.ts loads lazily import it, and must not import main back.
/** `--flag value` and `--flag=value` parsing for the few flags we have. */
export function parseFlags(args: string[], known: string[]): { flags: Record<string, string>; positional: string[]; error?: string } {
  const flags: Record<string, string> = {};
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith('--')) {
      positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = a.slice(2, eq < 0 ? undefined : eq);
    if (!known.includes(name)) return { flags, positional, error: `Unknown option --${name}` };
    const value = eq >= 0 ? a.slice(eq + 1) : args[++i];
    if (value === undefined) return { flags, positional, error: `Option --${name} needs a value` };
    flags[name] = value;
  }
  return { flags, positional };
}
