import {
  ApplicationCommandOptionType,
  MessageFlags,
  PermissionFlagsBits,
  type APIApplicationCommandSubcommandOption,
  type ChatInputCommandInteraction,
} from 'discord.js';
import { speakableName } from '../../src/speech/names.ts';
import { described, named } from '../../src/discord/interactions/command.ts';
import type { BotContext } from '../../src/discord/interactions/context.ts';
import { UserError } from '../../src/discord/errors.ts';
import { guildLang, t, type Lang } from '../../src/discord/i18n.ts';
import type { ArgsOf } from '../../src/discord/interactions/command-args.ts';

// /voice name: how a member's name is read before their messages and in announcements.
// Members set their own; admins (Manage Server) set anyone's.

/** Longest name a member can set (Discord's own nickname limit). */
export const READ_NAME_MAX = 32;
// Text that would turn into a ping, a channel link or a URL if it were ever shown: not a name.
const NOT_A_NAME = /<[@#]|@(?:everyone|here)|https?:\/\/|discord\.gg\//i;

export const NAME_SUBCOMMAND = {
  type: ApplicationCommandOptionType.Subcommand,
  ...named('name', '名前'),
  ...described('How your name is read (empty: your display name)', '名前の読み方（空で表示名に戻す）'),
  options: [
    {
      type: ApplicationCommandOptionType.String,
      ...named('reading', '読み方'),
      ...described('Name as it should be read', '読み上げる名前'),
      max_length: READ_NAME_MAX,
    },
    {
      type: ApplicationCommandOptionType.User,
      ...named('member', 'メンバー'),
      ...described("Someone else's name (admins)", '他のメンバーの名前（管理者）'),
    },
  ],
} as const satisfies APIApplicationCommandSubcommandOption;

/** /voice name's arguments, as its data declares them. */
export type VoiceNameArgs = ArgsOf<typeof NAME_SUBCOMMAND.options>;

/** What is wrong with a name a member typed, as an i18n key; undefined when it can be saved. */
export function nameProblem(
  name: string,
  lang: Lang,
): 'uservoice.name_too_long' | 'uservoice.name_invalid' | 'uservoice.name_unspeakable' | undefined {
  if ([...name].length > READ_NAME_MAX) return 'uservoice.name_too_long';
  if (NOT_A_NAME.test(name)) return 'uservoice.name_invalid';
  if (!speakableName(name, lang)) return 'uservoice.name_unspeakable';
  return undefined;
}

/** Runs /voice name: saves (or clears) the read name and answers with how it will sound. */
export async function runVoiceName(
  interaction: ChatInputCommandInteraction,
  ctx: BotContext,
  guildId: string,
  lang: Lang,
  args: VoiceNameArgs,
): Promise<void> {
  // The option's raw id: a user Discord did not resolve must never fall back to the caller.
  const target = { id: args.member ?? interaction.user.id };
  const self = target.id === interaction.user.id;
  if (!self && !interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild)) throw new UserError('error.admin_only');
  const raw = args.reading?.normalize('NFKC').trim() ?? '';
  const readLang = guildLang(ctx.repos.guildSettings.get(guildId).locale);
  const who = `<@${target.id}>`;
  if (raw === '') {
    await ctx.repos.userSettings.set(guildId, target.id, { nickname: null });
    await interaction.reply({
      content: t(lang, self ? 'uservoice.name_cleared' : 'uservoice.name_cleared_other', { member: who }),
      flags: MessageFlags.Ephemeral,
      allowedMentions: { parse: [] },
    });
    return;
  }
  const problem = nameProblem(raw, readLang);
  if (problem) throw new UserError(problem, { vars: { max: READ_NAME_MAX } });
  await ctx.repos.userSettings.set(guildId, target.id, { nickname: raw });
  const spoken = speakableName(raw, readLang, ctx.repos.dictionary.list(guildId, target.id));
  await interaction.reply({
    content: t(lang, self ? 'uservoice.name_saved' : 'uservoice.name_saved_other', { member: who, name: spoken }),
    flags: MessageFlags.Ephemeral,
    allowedMentions: { parse: [] },
  });
}
