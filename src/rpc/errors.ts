/**
 * The JSON-RPC error codes patchbay sends and recognises, in one place, so no file writes a
 * bare −326xx: the JSON-RPC 2.0 ones (https://www.jsonrpc.org/specification#error_object) and
 * the ones LSP adds in its reserved range (specs/lsp-3.0.md "Response Message", ErrorCodes and
 * LSPErrorCodes; ECA uses the same). Other protocols' own string codes (the gateway's
 * `AUTH_FAILED`, …) belong to their protocol folder, not here.
 */
export const RpcErrorCode = {
  /** Invalid JSON was received. */
  ParseError: -32700,
  /** The JSON sent is not a valid request object. */
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  /** Sent with no stack trace: the details stay in our log. */
  InternalError: -32603,
  /** LSP: a request arrived before `initialize`. */
  ServerNotInitialized: -32002,
  /** LSP: the request was cancelled (`$/cancelRequest`). */
  RequestCancelled: -32800,
  /** LSP: the document changed while the request ran; its answer would be stale. */
  ContentModified: -32801,
  /** LSP: the server cancelled the request itself and wants it asked again later. */
  ServerCancelled: -32802,
  /** LSP: the request was valid but could not be carried out. */
  RequestFailed: -32803,
} as const;

export type RpcErrorCode = (typeof RpcErrorCode)[keyof typeof RpcErrorCode];

/** Named destructured exports, for modules that use just one or two. */
export const { ParseError, InvalidRequest, MethodNotFound, InvalidParams, InternalError, ServerNotInitialized, RequestCancelled, ContentModified, ServerCancelled, RequestFailed } = RpcErrorCode;
