/**
 * The images among a prompt's contexts: inline image contexts, and file contexts naming an image
 * file (ECA docs/protocol.md "ImageContext": a FileContext pointing at a .png/.jpg/.jpeg/.gif/.webp
 * file is equivalent; ECA context.clj `file->refined-context`). They go to the model as image
 * parts, not as rendered text, so they are taken out before the rest is rendered. A bad or
 * oversized image is skipped with a reason; it never fails the prompt.
 */
import { extname } from 'node:path';
import type { Context } from '../../shapes/context.js';
import type { LlmImage } from '../../shapes/llm.js';
import { resolvePath } from '../../util/paths.js';
import { errorMessage } from '../../util/log.js';
import { readBounded } from '../../util/small-file.js';

/** The providers' own per-image limits are around 20 MB (OpenAI) or less; larger is refused here, with a reason. */
export const IMAGE_MAX_BYTES = 20 * 1024 * 1024;

/** Image file extensions ECA treats as images, and their media types. */
const IMAGE_TYPES: Readonly<Record<string, string>> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.webp': 'image/webp' };

export interface SplitImages {
  images: LlmImage[];
  /** The contexts that are not images, in their order, to be rendered as text. */
  rest: Context[];
  /** One reason per image left out, for the user. */
  errors: string[];
}

export interface ImageOptions {
  roots: string[];
  /** Largest image accepted, in bytes (default IMAGE_MAX_BYTES). */
  maxBytes?: number;
}

/**
 * The media types every vision API here takes (OpenAI, Anthropic, Ollama's models). Another one
 * (svg, heic, bmp…) would have the provider refuse every later request of the chat, so it is left
 * out with a reason instead. `image/jpg` is a common misspelling of `image/jpeg`.
 */
const MODEL_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** The media type as the models take it, or undefined when they do not take it. */
export function modelMediaType(mediaType: string): string | undefined {
  const t = mediaType.trim().toLowerCase();
  const norm = t === 'image/jpg' ? 'image/jpeg' : t;
  return MODEL_TYPES.has(norm) ? norm : undefined;
}

/** The media type of an image file by its extension, or undefined for any other file. */
export function imageMediaType(path: string): string | undefined {
  return IMAGE_TYPES[extname(path).toLowerCase()];
}

export async function splitImages(contexts: Context[], opts: ImageOptions): Promise<SplitImages> {
  const max = opts.maxBytes ?? IMAGE_MAX_BYTES;
  const out: SplitImages = { images: [], rest: [], errors: [] };
  for (const c of contexts) {
    if (c.type === 'image') {
      const why = imageProblem(c.mediaType, c.base64, max);
      if (why) out.errors.push(`image: ${why}`);
      else out.images.push({ mediaType: modelMediaType(c.mediaType)!, base64: c.base64.replace(/\s+/g, '') });
    } else if (c.type === 'file' && imageMediaType(c.path)) {
      const path = resolvePath(c.path, opts.roots);
      try {
        out.images.push({ mediaType: imageMediaType(path)!, base64: (await readImage(path, max)).toString('base64') });
      } catch (e) {
        out.errors.push(`image ${path}: ${errorMessage(e)}`);
      }
    } else out.rest.push(c);
  }
  return out;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Why inline image data would be refused (a media type the models do not take, not raw base64,
 * empty, over `max` bytes), or undefined when it is fine. For prompt images and tool-result images alike.
 */
export function imageProblem(mediaType: string, base64: string, max = IMAGE_MAX_BYTES): string | undefined {
  if (!/^image\/[\w.+-]+$/i.test(mediaType)) return `"${mediaType.slice(0, 80)}" is not an image media type (e.g. image/png)`;
  if (!modelMediaType(mediaType)) return `${mediaType} is not a type the models take (png, jpeg, gif or webp)`;
  if (base64.startsWith('data:')) return 'base64 must be the raw bytes, without a "data:" URL prefix';
  const compact = base64.replace(/\s+/g, '');
  if (!compact) return 'no image data';
  if (compact.length % 4 !== 0 || !BASE64.test(compact)) return 'the data is not valid base64';
  const bytes = (compact.length / 4) * 3 - (compact.endsWith('==') ? 2 : compact.endsWith('=') ? 1 : 0);
  if (bytes > max) return tooLarge(bytes, max);
  return undefined;
}

function tooLarge(bytes: number, max: number): string {
  // Just over the limit would read "20 MB; the limit is 20 MB".
  return size(bytes) === size(max) ? overLimit(max) : `the image is ${size(bytes)}; the limit is ${size(max)}`;
}

function overLimit(max: number): string {
  return `the image is over the limit of ${size(max)}`;
}

function size(bytes: number): string {
  const MB = 1024 * 1024;
  return bytes < MB ? `${bytes} bytes` : `${(bytes / MB).toFixed(1).replace(/\.0$/, '')} MB`;
}

/** The image file's bytes, refused when over `max` (util/small-file.ts says why only a regular file). */
async function readImage(path: string, max: number): Promise<Buffer> {
  let r;
  try {
    r = await readBounded(path, max, { whole: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new Error(`not found: ${path}`);
    if (code === 'EACCES' || code === 'EPERM') throw new Error(`permission denied: ${path}`);
    throw e;
  }
  if (r.kind === 'directory') throw new Error(`is a directory: ${path}`);
  if (r.kind === 'other') throw new Error(`not a regular file: ${path}`);
  // Over by its size, or grown past the limit while read.
  if (r.more) throw new Error(r.size > max ? tooLarge(r.size, max) : overLimit(max));
  return r.bytes;
}
