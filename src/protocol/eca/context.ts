/**
 * ECA chat contexts (specs/eca-protocol.md "Chat Prompt" → `ChatContext`, and "Chat Query
 * Context"). What an editor can @-mention; sent with `chat/prompt` and offered by
 * `chat/queryContext`.
 */
import { z } from 'zod';

/** 1-based, inclusive line range. */
export const linesRangeSchema = z.object({ start: z.number().int(), end: z.number().int() });
export type LinesRange = z.infer<typeof linesRangeSchema>;

export const fileContextSchema = z.object({
  type: z.literal('file'),
  path: z.string().min(1),
  linesRange: linesRangeSchema.optional(),
});
export type FileContext = z.infer<typeof fileContextSchema>;

export const directoryContextSchema = z.object({ type: z.literal('directory'), path: z.string().min(1) });
export type DirectoryContext = z.infer<typeof directoryContextSchema>;

export const webContextSchema = z.object({ type: z.literal('web'), url: z.string().min(1) });
export type WebContext = z.infer<typeof webContextSchema>;

/** The workspaces' structure, computed by the server. */
export const repoMapContextSchema = z.object({ type: z.literal('repoMap') });
export type RepoMapContext = z.infer<typeof repoMapContextSchema>;

/**
 * A cursor position as ECA editors send it: 1-based line and character (VS Code adds 1 to its
 * selection, Emacs sends its 1-based line and 1 + column).
 */
export const cursorPositionSchema = z.object({
  line: z.number().int(),
  character: z.number().int(),
});

export const cursorContextSchema = z.object({
  type: z.literal('cursor'),
  path: z.string().min(1),
  /** Without a selection, start equals end. */
  position: z.object({ start: cursorPositionSchema, end: cursorPositionSchema }),
});
export type CursorContext = z.infer<typeof cursorContextSchema>;

export const mcpResourceContextSchema = z.object({
  type: z.literal('mcpResource'),
  uri: z.string(),
  name: z.string(),
  description: z.string(),
  mimeType: z.string(),
  /** Name of the MCP server offering the resource. */
  server: z.string(),
});
export type McpResourceContext = z.infer<typeof mcpResourceContextSchema>;

/** Free text an editor attaches (e.g. an Emacs buffer or region), with an optional label. */
export const textContextSchema = z.object({ type: z.literal('text'), label: z.string().optional(), content: z.string() });
export type TextContext = z.infer<typeof textContextSchema>;

/**
 * ECA `ImageContext` (docs/protocol.md "Chat Prompt"): an image as raw base64 (no `data:` URL
 * prefix). A `FileContext` naming a .png/.jpg/.jpeg/.gif/.webp file is equivalent.
 */
export const imageContextSchema = z.object({ type: z.literal('image'), mediaType: z.string().min(1), base64: z.string() });
export type ImageContext = z.infer<typeof imageContextSchema>;

export const chatContextSchema = z.discriminatedUnion('type', [
  fileContextSchema,
  directoryContextSchema,
  webContextSchema,
  repoMapContextSchema,
  cursorContextSchema,
  mcpResourceContextSchema,
  textContextSchema,
  imageContextSchema,
]);
export type ChatContext = z.infer<typeof chatContextSchema>;

/**
 * `chat/queryContext` offers a bare `{type: 'cursor'}` (as ECA does): the editor fills in the
 * path and position of its cursor when the user picks it.
 */
export const cursorOfferSchema = z.object({ type: z.literal('cursor') });
export type CursorOffer = z.infer<typeof cursorOfferSchema>;

export const offeredContextSchema = z.union([chatContextSchema, cursorOfferSchema]);
export type OfferedContext = z.infer<typeof offeredContextSchema>;

export const queryContextResultSchema = z.object({
  chatId: z.string().optional(),
  contexts: z.array(offeredContextSchema),
});
export type QueryContextResult = z.infer<typeof queryContextResultSchema>;
