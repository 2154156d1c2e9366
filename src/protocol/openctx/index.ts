/** OpenCtx 0.1 wire types (specs/openctx-protocol-0.1.md): one zod schema per type, types inferred. */
export { selectorSchema, messageSelectorSchema, type Selector, type MessageSelector } from './selectors.js';
export { metaParamsSchema, metaResultSchema, type MetaParams, type MetaResult } from './meta.js';
export { mentionSchema, mentionsParamsSchema, type Mention, type MentionsParams, type MentionsResult } from './mentions.js';
export { itemSchema, itemsParamsSchema, userInterfaceSchema, assistantInfoSchema, type Item, type ItemsParams, type ItemsResult, type UserInterface, type AssistantInfo } from './items.js';
export { positionSchema, rangeSchema, annotationSchema, annotationsParamsSchema, type Position, type Range, type Annotation, type AnnotationsParams, type AnnotationsResult } from './annotations.js';
export {
  ErrorCodes,
  settingsSchema,
  requestMessageSchema,
  responseErrorSchema,
  responseMessageSchema,
  type ProviderSettings,
  type RequestMessage,
  type ResponseError,
  type ResponseMessage,
} from './messages.js';
export { paramsSchemas, openCtxMethods, type OpenCtxMethod } from './methods.js';
