/**
 * A session's agent (mode), model and variant, as ACP shows them: the modes (`SessionModeState`,
 * which clients such as CodeCompanion still use) and the config options that replace them
 * (`mode`, `model`, and `variant` when the model has variants). ACP v1 has no `set_model`:
 * models are a config option of category `model`.
 */
import { RequestError, type SessionConfigOption, type SessionModeState } from '@agentclientprotocol/sdk';
import type { Agent } from '../../shapes/agent.js';
import type { OpenedChat } from '../../core/chat/chats.js';
import type { ModelEntry } from '../../shapes/llm.js';
import { validVariant, variantNames } from '../../shapes/variants.js';

export interface SessionChoice {
  agent: Agent;
  /** The model id; undefined: the workspace's default. */
  model?: string;
  /** The variant; null: none. */
  variant: string | null;
}

/** The config option value meaning "no variant" (a select needs a value for it). */
const NO_VARIANT = 'none';

const MODES: Array<{ id: Agent; name: string; description: string }> = [
  { id: 'code', name: 'Code', description: 'Reads, edits and runs: the full agent.' },
  { id: 'plan', name: 'Plan', description: 'Reads and plans; makes no changes.' },
];

/** A stored chat's agent, model and variant (what `open`/`resume` answer) as the session's choice. */
export function choiceOf(opened: Pick<OpenedChat, 'agent' | 'model' | 'variant'>): SessionChoice {
  return { agent: opened.agent, ...(opened.model ? { model: opened.model } : {}), variant: opened.variant };
}

export function modeState(agent: Agent): SessionModeState {
  return { currentModeId: agent, availableModes: MODES };
}

export function configOptions(choice: SessionChoice, models: ModelEntry[], defaultModel: ModelEntry | undefined): SessionConfigOption[] {
  const options: SessionConfigOption[] = [
    { id: 'mode', name: 'Mode', category: 'mode', type: 'select', currentValue: choice.agent, options: MODES.map((m) => ({ value: m.id, name: m.name, description: m.description })) },
  ];
  const entry = models.find((m) => m.id === choice.model) ?? defaultModel;
  if (entry) {
    options.push({ id: 'model', name: 'Model', category: 'model', type: 'select', currentValue: entry.id, options: models.map((m) => ({ value: m.id, name: m.id })) });
    const variants = variantNames(entry);
    if (variants.length) {
      const current = validVariant(entry, choice.variant) ?? NO_VARIANT;
      options.push({ id: 'variant', name: 'Variant', category: 'thought_level', type: 'select', currentValue: current, options: [NO_VARIANT, ...variants].map((v) => ({ value: v, name: v })) });
    }
  }
  return options;
}

/** A `set_config_option` or `set_mode` applied to the session's choice; an unknown option or value is invalid params. */
export function applyOption(choice: SessionChoice, configId: string, value: unknown, models: ModelEntry[]): SessionChoice {
  if (typeof value !== 'string') throw RequestError.invalidParams({ configId }, `${configId}: the value must be a string`);
  switch (configId) {
    case 'mode':
      if (value !== 'code' && value !== 'plan') throw RequestError.invalidParams({ configId, value }, `mode: "${value}" is not one of code, plan`);
      return { ...choice, agent: value };
    case 'model': {
      if (!models.some((m) => m.id === value)) throw RequestError.invalidParams({ configId, value }, `model: "${value}" is not a configured model`);
      // A variant the new model lacks is kept (as ECA): back on a model that has it, it is selected again.
      return { ...choice, model: value };
    }
    case 'variant':
      return { ...choice, variant: value === NO_VARIANT ? null : value };
    default:
      throw RequestError.invalidParams({ configId }, `unknown config option "${configId}" (known: mode, model, variant)`);
  }
}
