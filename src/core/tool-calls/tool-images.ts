/**
 * The images a tool returns, checked as a prompt's images are (context/images.ts `imageProblem`):
 * a media type the models do not take, data that is not base64, an image over the limit. Kept, such
 * an image would be sent with every later request of the chat and have the provider refuse them
 * all; instead it becomes a text note that both the model and the editor read.
 */
import type { ToolOutput, ToolResult } from '../../shapes/tool.js';
import { imageProblem, modelMediaType } from '../context/images.js';

export function checkToolImages(result: ToolResult): ToolResult {
  if (!result.outputs.some((o) => o.type === 'image')) return result;
  return { ...result, outputs: result.outputs.map(checkOutput) };
}

function checkOutput(o: ToolOutput): ToolOutput {
  if (o.type !== 'image') return o;
  const why = imageProblem(o.mimeType, o.data);
  if (why) return { type: 'text', text: `[image omitted: ${why}]` };
  return { ...o, mimeType: modelMediaType(o.mimeType)!, data: o.data.replace(/\s+/g, '') };
}
