import {
  ApplicationCommandOptionType,
  ApplicationCommandType,
  InteractionContextType,
  type APIApplicationCommandBasicOption,
  type APIApplicationCommandSubcommandOption,
  type AutocompleteInteraction,
  type ChatInputCommandInteraction,
  type MessageContextMenuCommandInteraction,
  type ModalSubmitInteraction,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
  type RESTPostAPIContextMenuApplicationCommandsJSONBody,
} from 'discord.js';
import type { BotContext } from './context.ts';
import { MANAGE_GUILD } from './guards.ts';
import type { Lang } from '../../i18n/texts.ts';
import { LIMITS } from '../../tts/validation.ts';

/** One slash command: its registration data and its handlers. */
export interface Command {
  data: RESTPostAPIChatInputApplicationCommandsJSONBody;
  execute(interaction: ChatInputCommandInteraction, ctx: BotContext): Promise<void>;
  autocomplete?(interaction: AutocompleteInteraction, ctx: BotContext): Promise<void>;
}

/**
 * A message command (Apps > its name, on a message's menu: type 3, no description). Its file is
 * named for it in kebab case ("Fix reading" in fix-reading.ts). The modals it opens come back as
 * submits whose custom_id starts with `modal.id` followed by `:`.
 */
export interface MessageCommand {
  data: RESTPostAPIContextMenuApplicationCommandsJSONBody & { type: ApplicationCommandType.Message };
  execute(interaction: MessageContextMenuCommandInteraction, ctx: BotContext): Promise<void>;
  modal?: { id: string; submit(interaction: ModalSubmitInteraction, ctx: BotContext): Promise<void> };
}

/** Any command the loader accepts: a slash command or a message command. */
export type AnyCommand = Command | MessageCommand;

/** Whether the command is a message command (else a slash command). */
export function isMessageCommand(command: AnyCommand): command is MessageCommand {
  return command.data.type === ApplicationCommandType.Message;
}

/** The slash commands of a set (what /help names). */
export function slashCommands(commands: Iterable<AnyCommand>): Command[] {
  return [...commands].filter((c): c is Command => !isMessageCommand(c));
}

/** `name` + `name_localizations` for a command, option or choice name (ja and en-US). */
export function named<const N extends string>(en: N, ja: string) {
  return { name: en, name_localizations: { ja, 'en-US': en } };
}

/** `description` + `description_localizations` (ja and en-US). */
export function described(en: string, ja: string) {
  return { description: en, description_localizations: { ja, 'en-US': en } };
}

/** The standard endpoint's speed option (the service's range), as /say and /voice set declare it. */
export const STANDARD_SPEED_OPTION = {
  type: ApplicationCommandOptionType.Number,
  ...named('speed', '速さ'),
  ...described('Speed 0.3 to 4.0', '速さ 0.3〜4.0'),
  min_value: LIMITS.standardSpeed.min,
  max_value: LIMITS.standardSpeed.max,
} as const;

/** The standard endpoint's pitch option (the service's range), as /say and /voice set declare it. */
export const STANDARD_PITCH_OPTION = {
  type: ApplicationCommandOptionType.Number,
  ...named('pitch', '高さ'),
  ...described('Pitch -20 to 20', '高さ -20〜20'),
  min_value: LIMITS.standardPitch.min,
  max_value: LIMITS.standardPitch.max,
} as const;

/**
 * Every command and subcommand as a member's client shows it in `lang` (its `name_localizations`),
 * keyed by the English names with `_` between and for `-`: `{ join: '/参加', voice_name: '/マイボイス 名前' }`.
 */
export function shownNames(commands: Iterable<RESTPostAPIChatInputApplicationCommandsJSONBody>, lang: Lang): Record<string, string> {
  const shown = (o: { name: string; name_localizations?: Partial<Record<string, string | null>> | null | undefined }) =>
    (lang === 'ja' ? o.name_localizations?.ja : o.name_localizations?.['en-US']) ?? o.name;
  const key = (...names: string[]) => names.join('_').replaceAll('-', '_');
  const names: Record<string, string> = {};
  for (const command of commands) {
    names[key(command.name)] = `/${shown(command)}`;
    for (const option of command.options ?? []) {
      if (option.type === ApplicationCommandOptionType.Subcommand)
        names[key(command.name, option.name)] = `/${shown(command)} ${shown(option)}`;
      if (option.type !== ApplicationCommandOptionType.SubcommandGroup) continue;
      for (const sub of option.options ?? [])
        names[key(command.name, option.name, sub.name)] = `/${shown(command)} ${shown(option)} ${shown(sub)}`;
    }
  }
  return names;
}

/** Subcommand `sub` of `command` as a member's client shows it in `lang` ("/設定 名前読み上げ"); `sub` when it has none. */
export function shownSubcommand(command: RESTPostAPIChatInputApplicationCommandsJSONBody, sub: string, lang: Lang): string {
  return shownNames([command], lang)[`${command.name}_${sub}`.replaceAll('-', '_')] ?? sub;
}

/** A localised choice. */
export function choice<V extends string | number>(en: string, ja: string, value: V) {
  return { ...named(en, ja), value };
}

/** A localised subcommand; `options` left out when it takes none. Its name and options keep their literal types (command-args.ts). */
export function subcommand<const N extends string, const O extends APIApplicationCommandBasicOption[] = []>(
  en: N,
  ja: string,
  descEn: string,
  descJa: string,
  options?: O,
): Omit<APIApplicationCommandSubcommandOption, 'name' | 'options'> & {
  readonly type: ApplicationCommandOptionType.Subcommand;
  readonly name: N;
  readonly options?: O;
} {
  return { type: ApplicationCommandOptionType.Subcommand, ...named(en, ja), ...described(descEn, descJa), ...(options ? { options } : {}) };
}

/** The head of a server settings command: usable in servers only, shown to Manage Server by default (the handler checks again). */
export function adminCommand(en: string, ja: string, descEn: string, descJa: string) {
  return {
    ...named(en, ja),
    ...described(descEn, descJa),
    contexts: [InteractionContextType.Guild],
    default_member_permissions: MANAGE_GUILD,
  };
}
