/**
 * Images for wire APIs whose tool results take none (OpenAI chat completions, OpenAI responses,
 * Ollama): the tool message keeps its text, and the images follow in a user message after the run
 * of tool messages they came from, as ECA does (openai_chat.clj `tool_call_output`, openai.clj
 * `normalize-messages`). After the run, not between: an assistant message's tool calls must be
 * answered by the tool messages right after it.
 */
import type { LlmImage, LlmMessage } from '../../shapes/llm.js';

/** `data:<type>;base64,<bytes>`: how the OpenAI APIs take an inline image. */
export function dataUrl(img: LlmImage): string {
  return `data:${img.mediaType};base64,${img.base64}`;
}

/** The images of one tool result, and which tool returned them. */
export interface ToolImages {
  tool: string;
  images: LlmImage[];
}

/** The text a synthetic user message opens with, so the model knows whose images these are. */
export function toolImagesText(from: ToolImages[]): string {
  return `The image output of ${from.map((t) => t.tool).join(', ')} (tool results cannot carry images here):`;
}

/**
 * `convert` turns each message into wire messages; `imagesMessage` makes the user message that
 * carries the images tool messages returned. Order is kept; only the images move.
 */
export function withToolImagesAfter<T>(messages: LlmMessage[], convert: (m: LlmMessage) => T[], imagesMessage: (from: ToolImages[]) => T): T[] {
  const out: T[] = [];
  let pending: ToolImages[] = [];
  const flush = () => {
    if (pending.length) out.push(imagesMessage(pending));
    pending = [];
  };
  for (const m of messages) {
    if (m.role !== 'tool') flush();
    out.push(...convert(m));
    if (m.role === 'tool' && m.images?.length) pending.push({ tool: m.name, images: m.images });
  }
  flush();
  return out;
}
