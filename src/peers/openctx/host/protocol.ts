/**
 * What patchbay's OpenCtx host serves (specs/openctx-protocol-0.1.md): the wire schemas of
 * src/protocol/openctx, the provider interface the host calls, and its error helpers.
 */
import type { z } from 'zod';
import {
  ErrorCodes,
  type AnnotationsParams,
  type AnnotationsResult,
  type ItemsParams,
  type ItemsResult,
  type MentionsParams,
  type MentionsResult,
  type MetaParams,
  type MetaResult,
  type ProviderSettings,
} from '../../../protocol/openctx/index.js';

export {
  ErrorCodes,
  settingsSchema,
  requestMessageSchema,
  paramsSchemas,
  openCtxMethods,
  type OpenCtxMethod,
  type ProviderSettings,
  type RequestMessage,
  type ResponseError,
  type ResponseMessage,
  type MetaParams,
  type MetaResult,
  type Mention,
  type MentionsParams,
  type MentionsResult,
  type Item,
  type ItemsParams,
  type ItemsResult,
  type UserInterface,
  type AssistantInfo,
  type Annotation,
  type AnnotationsParams,
  type AnnotationsResult,
  type Position,
  type Range,
  type Selector,
  type MessageSelector,
} from '../../../protocol/openctx/index.js';

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

type Awaitable<T> = T | Promise<T>;

/**
 * A provider served by the host. `meta` is required; a protocol method a provider does not
 * implement answers `[]` (as OpenCtx's own module transport does), so aggregating clients that
 * call every method on every provider keep working. The host fills in `name` when `meta` omits it.
 */
export interface OpenCtxProviderImpl {
  meta(params: MetaParams, settings: ProviderSettings): Awaitable<MetaResult>;
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
