import {
  ApplicationCommandOptionType,
  ChannelType,
  InteractionContextType,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import { described, named, type Command } from '../../src/discord/interactions/command.ts';
import { memberVoiceChannel, requireGuild } from '../../src/discord/interactions/guards.ts';
import { langOf } from '../../src/i18n/texts.ts';
import { readArgs } from '../../src/discord/interactions/command-args.ts';
import { askToAlsoRead } from './read-channels.ts';

const data = {
  ...named('join', '参加'),
  ...described(
    'Join your voice channel and read this channel aloud until /leave (in the call already: add it)',
    'ボイスチャンネルに参加し、/退出 までこのチャンネルを読み上げます（参加中なら追加）',
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
    const guildId = requireGuild(interaction);
    const { channel } = readArgs(interaction, data.options);
    const lang = langOf(interaction.locale);
    // Already in that call, reading another text channel: this one is added to it (read-channels.ts), not swapped in.
    const target = channel ?? memberVoiceChannel(interaction);
    const session = target ? ctx.voiceControl.sessionAt(guildId, target) : undefined;
    if (session && (await askToAlsoRead(interaction, ctx, session, lang))) return;
    await ctx.voiceControl.join(interaction, channel ?? null, lang);
  },
} satisfies Command;
