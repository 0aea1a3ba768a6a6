import {
  ApplicationCommandOptionType,
  MessageFlags,
  PermissionFlagsBits,
  type APIApplicationCommandSubcommandOption,
  type ChatInputCommandInteraction,
} from 'discord.js';
import { described, named } from '../../src/discord/interactions/command.ts';
import type { BotContext } from '../../src/discord/interactions/context.ts';
import { UserError } from '../../src/i18n/errors.ts';
import { t, type Lang } from '../../src/i18n/texts.ts';
import { READ_NAME_MAX, setReadName } from '../../src/usecases/member-voice.ts';
import type { ArgsOf } from '../../src/discord/interactions/command-args.ts';

// /voice name: how a member's name is read before their messages and in announcements.
// Members set their own; admins (Manage Server) set anyone's.

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
type VoiceNameArgs = ArgsOf<typeof NAME_SUBCOMMAND.options>;

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
  const who = `<@${target.id}>`;
  const spoken = await setReadName(ctx, guildId, target.id, args.reading ?? '');
  if (spoken === null) {
    await interaction.reply({
      content: t(lang, self ? 'uservoice.name_cleared' : 'uservoice.name_cleared_other', { member: who }),
      flags: MessageFlags.Ephemeral,
      allowedMentions: { parse: [] },
    });
    return;
  }
  await interaction.reply({
    content: t(lang, self ? 'uservoice.name_saved' : 'uservoice.name_saved_other', { member: who, name: spoken }),
    flags: MessageFlags.Ephemeral,
    allowedMentions: { parse: [] },
  });
}
