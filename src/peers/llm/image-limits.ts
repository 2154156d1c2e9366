/**
 * Which of a conversation's images one request carries. The history keeps every image and is
 * sent again on each step, so one image an API refuses would fail every later request of the
 * chat, and a long screenshot session would grow each request without end. So, per request:
 * an image over the API's per-image limit, one past the API's per-request budget, and any older
 * than the last KEEP_LAST_IMAGES stay out, each replaced by a short text placeholder in its
 * message saying why. Nothing stored changes: a later request (or another model) decides again.
 */
import type { LlmImage, LlmMessage } from '../../shapes/llm.js';

/** The most recent images a request carries (prompt and tool images alike); older ones are placeholders. */
export const KEEP_LAST_IMAGES = 8;

export interface ImageLimits {
  /** The API's name, for the placeholder ("the Anthropic API"). */
  api: string;
  /**
   * What the limits count: the decoded bytes (OpenAI: "image bytes"), or the base64 text (Anthropic
   * checks the length of the base64 string).
   */
  measure: 'bytes' | 'base64';
  /** The largest image one request may carry. */
  perImage?: number;
  /** The most all of a request's images may add up to. */
  perRequest?: number;
  /** The most images one request may carry (at most KEEP_LAST_IMAGES are sent anyway). */
  count?: number;
}

/**
 * OpenAI's image input requirements (platform.openai.com "Images and vision"): up to 20 MB per
 * image, 50 MB of image bytes and 500 images per request; both OpenAI APIs, and the compatible
 * servers, which set no lower limit of their own that we know.
 */
export const OPENAI_IMAGE_LIMITS: ImageLimits = { api: 'OpenAI', measure: 'bytes', perImage: 20 * 1024 * 1024, perRequest: 50 * 1024 * 1024, count: 500 };

/** Where an image sits: message index, image index within it. */
interface Slot {
  message: number;
  image: number;
  img: LlmImage;
}

/** The messages with the images this request leaves out replaced by placeholders; the input is not changed. */
export function fitImages(messages: LlmMessage[], limits: ImageLimits): LlmMessage[] {
  const slots: Slot[] = [];
  messages.forEach((m, message) => {
    if (m.role !== 'assistant') (m.images ?? []).forEach((img, image) => slots.push({ message, image, img }));
  });
  if (!slots.length) return messages;
  const keep = Math.min(KEEP_LAST_IMAGES, limits.count ?? KEEP_LAST_IMAGES);
  const left = new Map<Slot, string>();
  let kept = 0;
  let total = 0;
  // Newest first: the images the model most likely needs are the latest ones.
  for (const slot of slots.reverse()) {
    const n = measure(slot.img, limits.measure);
    if (limits.perImage !== undefined && n > limits.perImage) left.set(slot, `over the ${limits.api} API's limit of ${size(limits.perImage)} per image${unit(limits)}`);
    else if (kept >= keep) left.set(slot, `older than the last ${keep}`);
    else if (limits.perRequest !== undefined && total + n > limits.perRequest)
      left.set(slot, `the newer images already fill the ${limits.api} API's ${size(limits.perRequest)} per request${unit(limits)}`);
    else {
      kept++;
      total += n;
    }
  }
  if (!left.size) return messages;
  const byMessage = new Map<number, Slot[]>();
  for (const slot of left.keys()) byMessage.set(slot.message, [...(byMessage.get(slot.message) ?? []), slot]);
  return messages.map((m, i) => {
    const out = byMessage.get(i);
    if (!out || m.role === 'assistant') return m;
    const dropped = new Set(out.map((s) => s.image));
    const images = (m.images ?? []).filter((_, j) => !dropped.has(j));
    const notes = out
      .sort((a, b) => a.image - b.image)
      .map((s) => `[image (${s.img.mediaType}, ${size(decodedBytes(s.img.base64))}) omitted: ${left.get(s)}]`)
      .join('\n');
    const content = m.content ? `${m.content}\n\n${notes}` : notes;
    const { images: _old, ...rest } = m;
    return { ...rest, content, ...(images.length ? { images } : {}) };
  });
}

function measure(img: LlmImage, how: ImageLimits['measure']): number {
  return how === 'base64' ? img.base64.length : decodedBytes(img.base64);
}

function unit(limits: ImageLimits): string {
  return limits.measure === 'base64' ? ' (as base64)' : '';
}

function decodedBytes(base64: string): number {
  const pad = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return Math.floor((base64.length * 3) / 4) - pad;
}

function size(n: number): string {
  const MB = 1024 * 1024;
  return n < MB ? `${n} bytes` : `${(n / MB).toFixed(1).replace(/\.0$/, '')} MB`;
}
