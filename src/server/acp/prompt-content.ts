/**
 * An ACP prompt (content blocks) as core's message and contexts. Text blocks are the message;
 * a `file:` resource link is a file context, an embedded text resource a text context (the
 * editor's own copy, unsaved changes included), an image an image context. What patchbay does
 * not take (audio, a binary resource that is not an image, a link that is not a file) is an
 * invalid-params error naming the block, so nothing the user attached is silently dropped.
 */
import { fileURLToPath } from 'node:url';
import { RequestError, type ContentBlock } from '@agentclientprotocol/sdk';
import type { Context } from '../../shapes/context.js';

export interface PromptParts {
  message: string;
  contexts: Context[];
}

export function promptParts(blocks: ContentBlock[]): PromptParts {
  const text: string[] = [];
  const contexts: Context[] = [];
  blocks.forEach((b, i) => {
    switch (b.type) {
      case 'text':
        text.push(b.text);
        return;
      case 'image':
        contexts.push({ type: 'image', mediaType: b.mimeType, base64: b.data });
        return;
      case 'resource_link':
        contexts.push({ type: 'file', path: filePath(b.uri, i) });
        return;
      case 'resource': {
        const r = b.resource;
        if ('text' in r) contexts.push({ type: 'text', label: labelOf(r.uri), content: r.text });
        else if (r.mimeType?.startsWith('image/')) contexts.push({ type: 'image', mediaType: r.mimeType, base64: r.blob });
        else throw RequestError.invalidParams({ block: i }, `prompt[${i}]: a binary resource (${r.mimeType ?? 'no mime type'}) is not supported; attach text or an image`);
        return;
      }
      case 'audio':
        throw RequestError.invalidParams({ block: i }, `prompt[${i}]: audio is not supported (promptCapabilities.audio is false)`);
    }
  });
  const message = text.join('\n').trim();
  if (!message && !contexts.length) throw RequestError.invalidParams({ field: 'prompt' }, 'the prompt is empty: send at least one text block');
  return { message, contexts };
}

function filePath(uri: string, i: number): string {
  if (uri.startsWith('file:')) {
    try {
      return fileURLToPath(uri);
    } catch {
      // fall through to the error below
    }
  }
  if (uri.startsWith('/')) return uri;
  throw RequestError.invalidParams({ block: i }, `prompt[${i}]: resource link ${JSON.stringify(uri)} is not a file: URI`);
}

/** A resource's label: its file path when it is a file, else the URI. */
function labelOf(uri: string): string {
  try {
    return uri.startsWith('file:') ? fileURLToPath(uri) : uri;
  } catch {
    return uri;
  }
}
