/**
 * OpenCtx provider protocol 0.1 (specs/openctx-protocol-0.1.md), as served by patchbay's
 * OpenCtx host: zod schemas for what a client sends (validated at the boundary) and the result
 * types a provider returns, including the newer `name`, `mentions` and `annotations` capability
 * objects of MetaResult that current OpenCtx clients rely on.
 */
import { z } from 'zod';
import { InternalError, InvalidParams, InvalidRequest, MethodNotFound, ParseError } from '../../../rpc/errors.js';

/** JSON-RPC-like error codes carried in `{error: {code, message}}` (the JSON-RPC 2.0 ones, from rpc/errors.ts). */
export const ErrorCodes = { ParseError, InvalidRequest, MethodNotFound, InvalidParams, InternalError } as const;

/** Thrown by providers (built-in or user) to answer with a specific error code and message. */
export class OpenCtxError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'OpenCtxError';
  }
}

export const invalidParams = (message: string): OpenCtxError => new OpenCtxError(ErrorCodes.InvalidParams, message);

// ---- requests -------------------------------------------------------------------------------

export const SettingsSchema = z.record(z.string(), z.unknown());
export type ProviderSettings = z.infer<typeof SettingsSchema>;

export const RequestMessageSchema = z.object({
  method: z.string().min(1),
  params: z.unknown().optional(),
  settings: z.unknown().optional(),
});
export type RequestMessage = z.infer<typeof RequestMessageSchema>;

/** Empty for now; unknown keys are tolerated so newer clients keep working. */
export const MetaParamsSchema = z.looseObject({});
export type MetaParams = z.infer<typeof MetaParamsSchema>;

export const MentionSchema = z.looseObject({
  title: z.string(),
  description: z.string().optional(),
  uri: z.string(),
  data: z.record(z.string(), z.unknown()).optional(),
});
export type Mention = z.infer<typeof MentionSchema>;

export const MentionsParamsSchema = z.looseObject({
  query: z.string().optional(),
  uri: z.string().optional(),
  codebase: z.string().optional(),
  autoInclude: z.boolean().optional(),
});
export type MentionsParams = z.infer<typeof MentionsParamsSchema>;

export const ItemsParamsSchema = z.looseObject({
  message: z.string().optional(),
  mention: MentionSchema.optional(),
});
export type ItemsParams = z.infer<typeof ItemsParamsSchema>;

export const AnnotationsParamsSchema = z.looseObject({
  uri: z.string(),
  content: z.string(),
});
export type AnnotationsParams = z.infer<typeof AnnotationsParamsSchema>;

/** The protocol's methods and their params schemas. */
export const paramsSchemas = {
  meta: MetaParamsSchema,
  mentions: MentionsParamsSchema,
  items: ItemsParamsSchema,
  annotations: AnnotationsParamsSchema,
} as const;
export type OpenCtxMethod = keyof typeof paramsSchemas;
export const openCtxMethods = Object.keys(paramsSchemas) as OpenCtxMethod[];

// ---- results --------------------------------------------------------------------------------

export interface Position {
  /** Line number (0-indexed). */
  line: number;
  /** Character offset on line (0-indexed). */
  character: number;
}
export interface Range {
  start: Position;
  end: Position;
}

/** Spec 0.1 selector (kept for older clients); newer clients read `annotations.selectors`. */
export interface Selector {
  path?: string;
  contentContains?: string;
}
export interface MessageSelector {
  pattern: string;
}

export interface MetaResult {
  /** Human-readable provider name. The host fills it in when a provider omits it. */
  name: string;
  selector?: Selector[];
  items?: { messageSelectors?: MessageSelector[] };
  mentions?: { label?: string; autoInclude?: boolean };
  annotations?: { selectors?: Selector[] };
  [k: string]: unknown;
}

export interface UserInterface {
  hover?: { markdown?: string; text?: string };
}
export interface AssistantInfo {
  content?: string;
}
export interface Item {
  title: string;
  url?: string;
  ui?: UserInterface;
  ai?: AssistantInfo;
}
export interface Annotation {
  uri: string;
  range?: Range;
  item: Item;
  presentationHints?: string[];
}

export type MentionsResult = Mention[];
export type ItemsResult = Item[];
export type AnnotationsResult = Annotation[];

export interface ResponseError {
  code: number;
  message: string;
  data?: unknown;
}
export type ResponseMessage = { result: unknown } | { error: ResponseError };

type Awaitable<T> = T | Promise<T>;

/**
 * A provider served by the host. `meta` is required; a protocol method a provider does not
 * implement answers `[]` (as OpenCtx's own module transport does), so aggregating clients that
 * call every method on every provider keep working.
 */
export interface OpenCtxProviderImpl {
  meta(params: MetaParams, settings: ProviderSettings): Awaitable<Partial<MetaResult> | MetaResult>;
  mentions?(params: MentionsParams, settings: ProviderSettings): Awaitable<MentionsResult | null | undefined>;
  items?(params: ItemsParams, settings: ProviderSettings): Awaitable<ItemsResult | null | undefined>;
  annotations?(params: AnnotationsParams, settings: ProviderSettings): Awaitable<AnnotationsResult | null | undefined>;
  /** Called by `OpenCtxHost.stop()`. */
  dispose?(): void | Promise<void>;
}

/** `"mention.uri: Invalid input: expected string, received number"` from a zod error. */
export function describeZodError(e: z.ZodError): string {
  return e.issues
    .map((i) => {
      const path = i.path.length ? i.path.map(String).join('.') : '(params)';
      return `${path}: ${i.message}`;
    })
    .join('; ');
}
