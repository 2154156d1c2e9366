/** The four OpenCtx methods and the schema of each one's params. */
import { annotationsParamsSchema } from './annotations.js';
import { itemsParamsSchema } from './items.js';
import { mentionsParamsSchema } from './mentions.js';
import { metaParamsSchema } from './meta.js';

export const paramsSchemas = {
  meta: metaParamsSchema,
  mentions: mentionsParamsSchema,
  items: itemsParamsSchema,
  annotations: annotationsParamsSchema,
} as const;
export type OpenCtxMethod = keyof typeof paramsSchemas;
export const openCtxMethods = Object.keys(paramsSchemas) as OpenCtxMethod[];
