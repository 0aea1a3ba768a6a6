import type {
  AutocompleteInteraction,
  ChatInputCommandInteraction,
  RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import type { BotContext } from './context.ts';

/** One slash command: its registration data and its handlers (STYLE.md #1). */
export interface Command {
  data: RESTPostAPIChatInputApplicationCommandsJSONBody;
  execute(interaction: ChatInputCommandInteraction, ctx: BotContext): Promise<void>;
  autocomplete?(interaction: AutocompleteInteraction, ctx: BotContext): Promise<void>;
}

/** `name` + `name_localizations` for a command, option or choice name (ja and en-US). */
export function named(en: string, ja: string) {
  return { name: en, name_localizations: { ja, 'en-US': en } };
}

/** `description` + `description_localizations` (ja and en-US). */
export function described(en: string, ja: string) {
  return { description: en, description_localizations: { ja, 'en-US': en } };
}

/** A localised choice. */
export function choice<V extends string | number>(en: string, ja: string, value: V) {
  return { ...named(en, ja), value };
}
