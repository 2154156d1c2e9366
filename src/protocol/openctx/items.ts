/** `items` (specs/openctx-protocol-0.1.md "Items"). */
import { z } from 'zod';
import { mentionSchema } from './mentions.js';

/** Spec `UserInterface`: what a person sees. */
export const userInterfaceSchema = z.looseObject({
  hover: z.looseObject({ markdown: z.string().optional(), text: z.string().optional() }).optional(),
});
export type UserInterface = z.infer<typeof userInterfaceSchema>;

/** Spec `AssistantInfo`: what the model reads. */
export const assistantInfoSchema = z.looseObject({ content: z.string().optional() });
export type AssistantInfo = z.infer<typeof assistantInfoSchema>;

export const itemSchema = z.looseObject({
  title: z.string(),
  url: z.string().optional(),
  ui: userInterfaceSchema.optional(),
  ai: assistantInfoSchema.optional(),
});
export type Item = z.infer<typeof itemSchema>;

export const itemsParamsSchema = z.looseObject({
  message: z.string().optional(),
  mention: mentionSchema.optional(),
});
export type ItemsParams = z.infer<typeof itemsParamsSchema>;

export type ItemsResult = Item[];
