/**
 * What a prompt's images become: taken out of its contexts (context/images.ts) to be stored with
 * the user message, with a notice for each one left out, and one when the model reads no images
 * (they stay stored: a later switch to a model that reads images sends them, as in ECA).
 */
import type { Context } from '../../shapes/context.js';
import type { LlmImage, ModelEntry } from '../../shapes/llm.js';
import { splitImages } from '../context/images.js';

type Notice = (text: string) => void;

export async function promptImages(contexts: Context[], entry: ModelEntry, roots: string[], notice: Notice): Promise<{ images: LlmImage[]; rest: Context[] }> {
  const { images, rest, errors } = await splitImages(contexts, { roots });
  for (const err of errors) notice(`Image skipped: ${err}`);
  if (images.length && !entry.imageInput) notice(noVisionText(entry, images.length === 1 ? 'The image was' : `The ${images.length} images were`));
  return { images, rest };
}

/** Why images were not sent, and how to say the model does read them. */
export function noVisionText(entry: ModelEntry, what: string): string {
  const name = entry.id.slice(entry.provider.length + 1);
  return `${what} not sent: ${entry.id} does not take image input. If it does, set "imageInput": true under providers.${entry.provider}.models.${name} in the config.`;
}
