import {
  ApplicationCommandOptionType,
  ChannelType,
  InteractionContextType,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import { described, named, type Command } from '../../src/discord/interactions/command.ts';
import { requireGuild } from '../../src/discord/interactions/guards.ts';
import { langOf } from '../../src/i18n/texts.ts';
import { readArgs } from '../../src/discord/interactions/command-args.ts';

const data = {
  ...named('join', '参加'),
  ...described(
    'Join your voice channel and read this text channel aloud until /leave',
    'ボイスチャンネルに参加し、/退出 までこのチャンネルを読み上げます',
  ),
  contexts: [InteractionContextType.Guild],
  options: [
    {
      type: ApplicationCommandOptionType.Channel,
      ...named('channel', 'チャンネル'),
      ...described('Voice channel to join (default: the one you are in)', '参加するボイスチャンネル（省略時はあなたのいるチャンネル）'),
      channel_types: [ChannelType.GuildVoice, ChannelType.GuildStageVoice],
    },
  ],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

export default {
  data,
  async execute(interaction, ctx) {
    requireGuild(interaction);
    const { channel } = readArgs(interaction, data.options);
    await ctx.voiceControl.join(interaction, channel ?? null, langOf(interaction.locale));
  },
} satisfies Command;
