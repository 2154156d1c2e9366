/** ECA's hooks (docs/config/hooks.md): shell actions run on chat events, with a JSON contract. */
export { Hooks, parseAnswer, typeOf, type HookChat, type HookRun, type HooksEnv, type TriggerOptions } from './hooks.js';
export { runAction, DEFAULT_HOOK_TIMEOUT_MS, type ActionRun } from './runner.js';
export { matches, type MatchData } from './matcher.js';
export { additionalContexts, blockText, followUpOf, postToolVerdict, preToolVerdict, stopOf, stoppedText, wrapContext, type HookStop } from './effects.js';
export { hookedTurn } from './turn-hooks.js';
export { hookChat } from './hook-chat.js';
export { afterCompact, beforeCompact, type CompactVeto } from './compact-hooks.js';
export { StatusHooks } from './status-hooks.js';
export { postToolCall, preToolCall, type PreToolOutcome, type ToolHooksEnv } from './tool-hooks.js';
