import {
  ApplicationCommandOptionType,
  MessageFlags,
  type APIApplicationCommandSubcommandOption,
  type ChatInputCommandInteraction,
} from 'discord.js';
import type { GuildSettings } from '../../src/domain/guild-settings.ts';
import { choice, described, named } from '../../src/discord/interactions/command.ts';
import type { BotContext } from '../../src/discord/interactions/context.ts';
import { guildLang, t, type Lang } from '../../src/i18n/texts.ts';
import { shownLimit } from '../../src/usecases/limits.ts';
import { commandActor, isVoiceChannelOf } from '../../src/discord/interactions/guards.ts';
import { changeGuildSettings, GUILD_LIMIT_MAX, setMuted, type SettingsChange } from '../../src/usecases/settings.ts';
import { listReply } from '../../src/discord/interactions/list-reply.ts';
import type { AppliedLimit } from '../../src/billing/policy.ts';
import type { SubcommandHandlers } from '../../src/discord/interactions/command-args.ts';

// /config subcommands about the server's members and its whole: muting a member's reading, the
// list of muted members, the server's reading language and its monthly character limit.

export const MEMBER_CONTROL_SUBCOMMANDS = [
  {
    type: ApplicationCommandOptionType.Subcommand,
    ...named('mute', 'ミュート'),
    ...described("Stop or resume reading a member's messages", 'メンバーのメッセージを読まない／読むに戻す'),
    options: [
      { type: ApplicationCommandOptionType.User, ...named('member', 'メンバー'), ...described('Member', 'メンバー'), required: true },
      {
        type: ApplicationCommandOptionType.Boolean,
        ...named('muted', 'ミュート'),
        ...described('True: not read; false: read again', 'オンで読まない、オフで読むに戻す'),
        required: true,
      },
    ],
  },
  {
    type: ApplicationCommandOptionType.Subcommand,
    ...named('muted', 'ミュート一覧'),
    ...described('List the muted members', 'ミュート中のメンバー一覧'),
  },
  {
    type: ApplicationCommandOptionType.Subcommand,
    ...named('language', '読み上げ言語'),
    ...described('Reading language of the server (names, announcements, omissions)', 'サーバーの読み上げ言語（名前・入退室・省略の言葉）'),
    options: [
      {
        type: ApplicationCommandOptionType.String,
        ...named('value', '値'),
        ...described('Language', '言語'),
        required: true,
        choices: [choice('Japanese', '日本語', 'ja'), choice('English', '英語', 'en')],
      },
    ],
  },
  {
    type: ApplicationCommandOptionType.Subcommand,
    ...named('server-limit', 'サーバー上限'),
    ...described('Monthly characters for the whole server (0 = nothing is read)', 'サーバー全体の月間文字数（0で読み上げなし）'),
    options: [
      {
        type: ApplicationCommandOptionType.Integer,
        ...named('value', '値'),
        ...described('Characters', '文字数'),
        required: true,
        min_value: 0,
        max_value: GUILD_LIMIT_MAX,
      },
    ],
  },
] as const satisfies readonly APIApplicationCommandSubcommandOption[];

/** The last lines of /config show: reading language, the server's limit, how many text channels a call reads. */
export function showMore(lang: Lang, s: GuildSettings, guildLimit: AppliedLimit): string {
  const language = t(lang, guildLang(s.locale) === 'en' ? 'config.lang_en' : 'config.lang_ja');
  return [
    t(lang, 'config.show_more', { language, guildLimit: shownLimit(lang, guildLimit) }),
    t(lang, 'config.show_text_channels', { count: s.textChannelsPerCall }),
  ].join('\n');
}

/**
 * The handlers of MEMBER_CONTROL_SUBCOMMANDS (the caller checked Manage Server). Bad input is
 * refused with a UserError before anything is written.
 */
export function memberControls(
  interaction: ChatInputCommandInteraction,
  ctx: BotContext,
  guildId: string,
  lang: Lang,
): SubcommandHandlers<{ options: typeof MEMBER_CONTROL_SUBCOMMANDS }> {
  const isVoiceChannel = (id: string) => isVoiceChannelOf(interaction.client, guildId, id);
  const change = (patch: SettingsChange) => changeGuildSettings(ctx, guildId, commandActor(interaction), patch, { isVoiceChannel });
  return {
    async mute({ member, muted }) {
      await setMuted(ctx, guildId, commandActor(interaction), { id: member, isBot: member === interaction.client.user.id }, muted);
      await interaction.reply({
        content: t(lang, muted ? 'config.muted_one' : 'config.unmuted_one', { member: `<@${member}>` }),
        allowedMentions: { parse: [] },
      });
    },
    async muted() {
      const ids = ctx.repos.userSettings.muted(guildId);
      if (ids.length === 0) {
        await interaction.reply({ content: t(lang, 'config.muted_none'), flags: MessageFlags.Ephemeral });
        return;
      }
      const name = (id: string) => interaction.guild?.members.cache.get(id)?.displayName ?? id;
      const list = listReply(lang, {
        text: (members) => t(lang, 'config.muted_list', { count: ids.length, members }),
        lines: ids.map((id) => `<@${id}>`),
        separator: ', ',
        fileName: 'muted-members.txt',
        fileLines: ids.map((id) => `@${name(id)} (${id})`),
      });
      await interaction.reply({ ...list, flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } });
    },
    async language(args) {
      // Checked again (src/usecases/settings.ts): the choices bind Discord's client, not a forged request.
      const value: string = args.value;
      await change({ locale: value as 'ja' | 'en' });
      await interaction.reply({
        content: t(lang, 'config.language_saved', { language: t(lang, value === 'en' ? 'config.lang_en' : 'config.lang_ja') }),
      });
    },
    async 'server-limit'({ value }) {
      await change({ guildMonthlyLimit: value });
      const used = (await ctx.budget.usage({ guildId })).used;
      await interaction.reply({ content: t(lang, 'config.server_limit_saved', { limit: value, used }) });
    },
  };
}
