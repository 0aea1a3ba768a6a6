import { ApplicationCommandOptionType, ChannelType, InteractionContextType, MessageFlags, type APIApplicationCommandChannelOption, type RESTPostAPIChatInputApplicationCommandsJSONBody } from 'discord.js';
import { described, named, UserError, type Command } from '../src/discord/command.ts';
import { MANAGE_GUILD, requireManageGuild } from '../src/discord/guards.ts';
import { langOf, t } from '../src/discord/i18n.ts';

const channelOption: APIApplicationCommandChannelOption = {
  type: ApplicationCommandOptionType.Channel,
  ...named('channel', 'チャンネル'),
  ...described('Text channel (default: this one)', 'テキストチャンネル（省略時はこのチャンネル）'),
  channel_types: [ChannelType.GuildText, ChannelType.GuildAnnouncement, ChannelType.GuildVoice],
};

const data = {
  ...named('autoread', '自動読み上げ'),
  ...described('Text channels read aloud automatically (admins)', '自動で読み上げるテキストチャンネル（管理者）'),
  contexts: [InteractionContextType.Guild],
  default_member_permissions: MANAGE_GUILD,
  options: [
    { type: ApplicationCommandOptionType.Subcommand, ...named('add', '追加'), ...described('Read a channel aloud automatically', 'チャンネルを自動読み上げに追加'), options: [channelOption] },
    { type: ApplicationCommandOptionType.Subcommand, ...named('remove', '削除'), ...described('Stop reading a channel automatically', 'チャンネルを自動読み上げから外す'), options: [channelOption] },
    { type: ApplicationCommandOptionType.Subcommand, ...named('list', '一覧'), ...described('List auto-read channels', '自動読み上げチャンネルの一覧') },
  ],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

export default {
  data,
  async execute(interaction, ctx) {
    const guildId = requireManageGuild(interaction);
    const lang = langOf(interaction.locale);
    const sub = interaction.options.getSubcommand();
    const repo = ctx.repos.autoRead;
    if (sub === 'list') {
      const ids = repo.list(guildId);
      const content = ids.length ? t(lang, 'autoread.list', { channels: ids.map((id) => `<#${id}>`).join(', ') }) : t(lang, 'autoread.none');
      await interaction.reply({ content, flags: MessageFlags.Ephemeral });
      return;
    }
    const channelId = interaction.options.getChannel('channel')?.id ?? interaction.channelId;
    const channel = `<#${channelId}>`;
    if (sub === 'add') {
      await repo.add(guildId, channelId);
      await interaction.reply({ content: t(lang, 'autoread.added', { channel }) });
    } else {
      if (!(await repo.remove(guildId, channelId))) throw new UserError('autoread.not_listed', { channel });
      await interaction.reply({ content: t(lang, 'autoread.removed', { channel }) });
    }
  },
} satisfies Command;
