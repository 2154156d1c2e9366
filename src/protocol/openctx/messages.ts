/**
 * The HTTP envelope (specs/openctx-protocol-0.1.md "Transport"): a POST body is a
 * `RequestMessage`, the answer a `ResponseMessage` with `result` or `error`.
 */
import { z } from 'zod';
import { InternalError, InvalidParams, InvalidRequest, MethodNotFound, ParseError } from '../../rpc/errors.js';

/** JSON-RPC-like error codes carried in `{error: {code, message}}`. */
export const ErrorCodes = { ParseError, InvalidRequest, MethodNotFound, InvalidParams, InternalError } as const;

/** Per-provider settings a client sends with every request. */
export const settingsSchema = z.record(z.string(), z.unknown());
export type ProviderSettings = z.infer<typeof settingsSchema>;

export const requestMessageSchema = z.object({
  method: z.string().min(1),
  params: z.unknown().optional(),
  settings: z.unknown().optional(),
});
export type RequestMessage = z.infer<typeof requestMessageSchema>;

export const responseErrorSchema = z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() });
export type ResponseError = z.infer<typeof responseErrorSchema>;

export const responseMessageSchema = z.union([z.object({ error: responseErrorSchema }), z.object({ result: z.unknown() })]);
export type ResponseMessage = z.infer<typeof responseMessageSchema>;
