import {
  ApplicationCommandOptionType,
  ChannelType,
  MessageFlags,
  type APIApplicationCommandChannelOption,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import { adminCommand, described, named, subcommand, type Command } from '../../src/discord/interactions/command.ts';
import { commandActor, requireManageGuild } from '../../src/discord/interactions/guards.ts';
import { langOf, t } from '../../src/i18n/texts.ts';
import { listReply } from '../../src/discord/interactions/list-reply.ts';
import { memberCanView } from '../../src/discord/audience/visibility.ts';
import type { AutoReadChannel } from '../../src/domain/reading.ts';
import { runSubcommand } from '../../src/discord/interactions/command-args.ts';
import { addAutoRead, removeAutoRead } from '../../src/usecases/reading.ts';
import { AUTO_READ_CHANNEL_TYPES, isAutoReadable } from '../../src/discord/channels.ts';

const channelOption: APIApplicationCommandChannelOption = {
  type: ApplicationCommandOptionType.Channel,
  ...named('channel', 'チャンネル'),
  ...described('Text, voice or forum channel (default: this one)', 'テキスト・ボイス・フォーラムチャンネル（省略時はこのチャンネル）'),
  channel_types: [...AUTO_READ_CHANNEL_TYPES],
};

const data = {
  ...adminCommand(
    'autoread',
    '自動読み上げ',
    'Text channels read aloud automatically (admins)',
    '自動で読み上げるテキストチャンネル（管理者）',
  ),
  options: [
    subcommand(
      'add',
      '追加',
      'Read a channel aloud automatically while I am in voice',
      'ボイスチャンネルにいる間、チャンネルを自動で読み上げ',
      [
        channelOption,
        {
          type: ApplicationCommandOptionType.Boolean,
          ...named('mp3', 'mp3投稿'),
          ...described(
            'Also post MP3s while I am in no voice channel (costs characters)',
            'ボイスチャンネルにいないときは MP3 を投稿（文字数を消費します）',
          ),
        },
      ],
    ),
    subcommand('remove', '削除', 'Stop reading a channel automatically', 'チャンネルを自動読み上げから外す', [channelOption]),
    subcommand('list', '一覧', 'List auto-read channels', '自動読み上げチャンネルの一覧'),
  ],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

export default {
  data,
  async execute(interaction, ctx) {
    const guildId = requireManageGuild(interaction);
    const lang = langOf(interaction.locale);
    const repo = ctx.repos.autoRead;
    await runSubcommand(interaction, data, {
      async list() {
        const entries = repo.entries(guildId);
        if (entries.length === 0)
          return void (await interaction.reply({ content: t(lang, 'autoread.none'), flags: MessageFlags.Ephemeral }));
        const tag = (e: AutoReadChannel) => (e.postAudio ? t(lang, 'autoread.mp3_tag') : '');
        // The file names channels (mentions do not render there): a channel this admin cannot view
        // is listed by its id only, as Discord shows them its mention.
        const member = interaction.guild?.members.cache.get(interaction.user.id);
        const nameOf = (id: string) => {
          const channel = interaction.guild?.channels.cache.get(id);
          if (!channel) return id;
          return member && memberCanView(channel, member) ? `#${channel.name}` : t(lang, 'autoread.hidden_channel');
        };
        const list = listReply(lang, {
          text: (channels) => t(lang, 'autoread.list', { channels }),
          lines: entries.map((e) => `<#${e.channelId}>${tag(e)}`),
          separator: ', ',
          fileName: 'autoread-channels.txt',
          fileLines: entries.map((e) => `${nameOf(e.channelId)} (${e.channelId})${tag(e)}`),
        });
        await interaction.reply({ ...list, flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } });
      },
      async add(args) {
        const channelId = args.channel ?? interaction.channelId;
        // Off by default: MP3s posted while nobody listens in voice cost characters.
        const postAudio = args.mp3 ?? false;
        // Discord offers only these channel types; a channel it resolved but the cache lacks counts as text.
        const type = interaction.guild?.channels.cache.get(channelId)?.type ?? ChannelType.GuildText;
        await addAutoRead(ctx, guildId, commandActor(interaction), { id: channelId, readable: isAutoReadable(type) }, postAudio);
        await interaction.reply({ content: t(lang, postAudio ? 'autoread.added_mp3' : 'autoread.added', { channel: `<#${channelId}>` }) });
      },
      async remove(args) {
        const channel = `<#${args.channel ?? interaction.channelId}>`;
        await removeAutoRead(ctx, guildId, commandActor(interaction), args.channel ?? interaction.channelId);
        await interaction.reply({ content: t(lang, 'autoread.removed', { channel }) });
      },
    });
  },
} satisfies Command;
