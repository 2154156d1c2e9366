/**
 * Builds a native `Tool` from a zod schema and a `run` function. This is the one place where
 * native tool arguments are validated and where failures become results the model can read
 * (CONTRIBUTING.md "How the code is written"): `call` never throws.
 */
import { z } from 'zod';
import type { FileChangeDetails, JsonSchema, Tool, ToolContext, ToolResult } from './tool.js';
import { textResult } from './tool.js';

export interface NativeToolSpec<S extends z.ZodType<Record<string, unknown>>> {
  name: string;
  description: string;
  schema: S;
  readOnly: boolean;
  mutates: boolean;
  /** See `Tool.mutatesCall`. */
  mutatesCall?(args: Partial<z.infer<S>>): boolean;
  /** Argument names holding paths, checked for workspace escapes before the call is approved. */
  pathArgs: string[];
  summary(args: Partial<z.infer<S>>): string | undefined;
  preview?(args: z.infer<S>, ctx: ToolContext): Promise<FileChangeDetails | undefined>;
  /** See `Tool.smallContext`: `false`, or the shorter description and schema a small-context model gets. */
  smallContext?: false | { description: string; schema: z.ZodType };
  run(args: z.infer<S>, ctx: ToolContext): Promise<ToolResult>;
}

export function defineNativeTool<S extends z.ZodType<Record<string, unknown>>>(spec: NativeToolSpec<S>): Tool {
  const parse = (raw: Record<string, unknown>): { ok: true; args: z.infer<S> } | { ok: false; message: string } => {
    const r = spec.schema.safeParse(dropNulls(raw));
    return r.success ? { ok: true, args: r.data } : { ok: false, message: formatIssues(spec.name, r.error) };
  };
  const tool: Tool = {
    name: spec.name,
    server: 'patchbay',
    origin: 'native',
    description: spec.description,
    // Computed on first use: it is not needed to answer `initialize`, and start-up time counts.
    get inputSchema() {
      const value = toInputSchema(spec.schema);
      Object.defineProperty(this, 'inputSchema', { value, enumerable: true });
      return value;
    },
    readOnly: spec.readOnly,
    mutates: spec.mutates,
    ...(spec.mutatesCall ? { mutatesCall: (raw: Record<string, unknown>) => spec.mutatesCall!(dropNulls(raw ?? {}) as Partial<z.infer<S>>) } : {}),
    summary(raw) {
      try {
        return spec.summary(dropNulls(raw ?? {}) as Partial<z.infer<S>>);
      } catch {
        return undefined;
      }
    },
    paths(raw) {
      // Raw strings even when other arguments are invalid: the check must not be skippable.
      const out: string[] = [];
      for (const key of spec.pathArgs) {
        const v = raw?.[key];
        if (typeof v === 'string' && v !== '') out.push(v);
      }
      return out;
    },
    async call(raw, ctx) {
      const p = parse(raw ?? {});
      if (p.ok === false) return textResult(p.message, true);
      if (ctx.signal.aborted) return textResult(`${spec.name} was cancelled before it started.`, true);
      try {
        return await spec.run(p.args, ctx);
      } catch (err) {
        if (ctx.signal.aborted) return textResult(`${spec.name} was cancelled.`, true);
        return textResult(`${spec.name} failed: ${err instanceof Error ? err.message : String(err)}`, true);
      }
    },
  };
  const small = spec.smallContext;
  if (small === false) tool.smallContext = false;
  else if (small) {
    let schema: JsonSchema | undefined;
    // Computed on first use, as the full schema is.
    tool.smallContext = {
      description: small.description,
      get inputSchema() {
        return (schema ??= toInputSchema(small.schema));
      },
    };
  }
  const preview = spec.preview;
  if (preview) {
    tool.preview = async (raw, ctx) => {
      const p = parse(raw ?? {});
      if (p.ok === false) return undefined;
      try {
        return await preview(p.args, ctx);
      } catch {
        return undefined;
      }
    };
  }
  return tool;
}

/** Some models send `null` for an omitted optional argument; treat it as omitted. */
function dropNulls(raw: Record<string, unknown>): Record<string, unknown> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  return Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== null));
}

function formatIssues(tool: string, error: z.ZodError): string {
  const lines = error.issues.map((i) => `- ${i.path.length ? i.path.join('.') : '(arguments)'}: ${i.message}`);
  return `Invalid arguments for ${tool}:\n${lines.join('\n')}`;
}

function toInputSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: 'input' }) as JsonSchema;
  return rest;
}
