/**
 * The internal Context shape (ARCHITECTURE.md "The one idea"): what a user can @-mention and
 * how it is named, whatever front end or peer it came from. Front ends validate their own wire
 * shapes and hand these to core; peers (MCP resources, OpenCtx mentions) offer `resource`s.
 */
import { z } from 'zod';

/** 1-based, inclusive line range. */
export const linesRangeSchema = z.object({ start: z.number().int(), end: z.number().int() });
export type LinesRange = z.infer<typeof linesRangeSchema>;

const position = z.object({ line: z.number().int(), character: z.number().int() });

export const fileContextSchema = z.object({ type: z.literal('file'), path: z.string().min(1), linesRange: linesRangeSchema.optional() });
export const directoryContextSchema = z.object({ type: z.literal('directory'), path: z.string().min(1) });
export const webContextSchema = z.object({ type: z.literal('web'), url: z.string().min(1) });
/** The workspaces' structure, computed by the runtime. */
export const repoMapContextSchema = z.object({ type: z.literal('repoMap') });
/** A cursor or selection: 1-based line and character; without a selection start equals end. */
export const cursorContextSchema = z.object({ type: z.literal('cursor'), path: z.string().min(1), position: z.object({ start: position, end: position }) });
/**
 * A resource a peer offers, read through the peer that offers it: an MCP server's resource, or an
 * OpenCtx mention (`server` is `openctx:<provider>`). Front ends name it their own way (ECA:
 * `mcpResource`); their façades translate.
 */
export const resourceContextSchema = z.object({
  type: z.literal('resource'),
  uri: z.string(),
  name: z.string(),
  description: z.string(),
  mimeType: z.string(),
  server: z.string(),
});
/** Free text the front end attaches (an Emacs buffer or region), with an optional label. */
export const textContextSchema = z.object({ type: z.literal('text'), label: z.string().optional(), content: z.string() });

/**
 * An image the front end attaches inline: its bytes as base64 (no `data:` prefix). Core sends it to
 * vision-capable models as an image part; a file context naming an image file becomes one of these.
 */
export const imageContextSchema = z.object({ type: z.literal('image'), mediaType: z.string().min(1), base64: z.string() });

export const contextSchema = z.discriminatedUnion('type', [
  fileContextSchema,
  directoryContextSchema,
  webContextSchema,
  repoMapContextSchema,
  cursorContextSchema,
  resourceContextSchema,
  textContextSchema,
  imageContextSchema,
]);
export type Context = z.infer<typeof contextSchema>;
export type FileContext = z.infer<typeof fileContextSchema>;
export type DirectoryContext = z.infer<typeof directoryContextSchema>;
export type WebContext = z.infer<typeof webContextSchema>;
export type CursorContext = z.infer<typeof cursorContextSchema>;
export type ResourceContext = z.infer<typeof resourceContextSchema>;
export type ImageContext = z.infer<typeof imageContextSchema>;

/** What a context search offers: any context, or a bare cursor the front end fills in when picked. */
export type OfferedContext = Context | { type: 'cursor' };
