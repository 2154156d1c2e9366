/**
 * An ACP prompt (content blocks) as core's message and contexts. Text blocks are the message;
 * a `file:` resource link is a file context (a directory context when it ends in `/`, as editors
 * link folders), an http(s) link a web context, an embedded text resource a text context (the
 * editor's own copy, unsaved changes included), an image an image context. Any other link (an
 * editor's own `zed:` thread or rule, a `mailto:`) is named in the message: ACP makes resource
 * links a baseline every agent MUST take (initialization.mdx "Prompt Capabilities"), so none is
 * refused. What patchbay does not take (audio, a binary resource that is not an image) is an
 * invalid-params error naming the block, so nothing the user attached is silently dropped.
 */
import { fileURLToPath } from 'node:url';
import { RequestError, type ContentBlock } from '@agentclientprotocol/sdk';
import type { Context, LinesRange } from '../../shapes/context.js';

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
      case 'resource_link': {
        const linked = linkContext(b.uri);
        if (linked) contexts.push(linked);
        else text.push(`[${b.name}](${b.uri})`);
        return;
      }
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

/** What a link is read as; undefined for a link patchbay cannot read (it is named in the message instead). */
function linkContext(uri: string): Context | undefined {
  if (/^https?:\/\//i.test(uri)) return { type: 'web', url: uri };
  let path: string | undefined;
  if (uri.startsWith('/')) path = uri;
  else if (uri.startsWith('file:')) {
    try {
      path = fileURLToPath(uri);
    } catch {
      // A file: URI naming another host: nothing here can read it.
      return undefined;
    }
  }
  if (path === undefined) return undefined;
  if (path.length > 1 && path.endsWith('/')) return { type: 'directory', path: path.slice(0, -1) };
  const lines = linesOf(uri);
  return { type: 'file', path, ...(lines ? { linesRange: lines } : {}) };
}

/**
 * The lines a file: URI's fragment names: Zed's selections and symbols are `#L<start>:<end>`
 * (1-based, inclusive: crates/acp_thread mention.rs), the web's `#L<start>-L<end>` is read too.
 */
function linesOf(uri: string): LinesRange | undefined {
  const m = /#L(\d+)(?:[:-]L?(\d+))?$/.exec(uri);
  if (!m) return undefined;
  const start = Number(m[1]);
  const end = m[2] === undefined ? start : Number(m[2]);
  return start >= 1 && end >= start ? { start, end } : undefined;
}

/** A resource's label: its file path (and the lines, for a selection) when it is a file, else the URI. */
function labelOf(uri: string): string {
  try {
    if (!uri.startsWith('file:')) return uri;
    const lines = linesOf(uri);
    return `${fileURLToPath(uri)}${lines ? ` (lines ${lines.start}-${lines.end})` : ''}`;
  } catch {
    return uri;
  }
}
