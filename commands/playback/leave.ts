import { InteractionContextType, type RESTPostAPIChatInputApplicationCommandsJSONBody } from 'discord.js';
import { described, named, type Command } from '../../src/discord/interactions/command.ts';
import { UserError } from '../../src/discord/errors.ts';
import { requireGuild, requirePlaybackControl } from '../../src/discord/interactions/guards.ts';
import { langOf, t } from '../../src/discord/i18n.ts';

const data = {
  ...named('leave', '退出'),
  ...described('Leave the voice channel and stop reading', 'ボイスチャンネルから退出し、読み上げをやめます'),
  contexts: [InteractionContextType.Guild],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

export default {
  data,
  async execute(interaction, ctx) {
    const guildId = requireGuild(interaction);
    const botChannelId = ctx.voice.voiceChannel(guildId);
    if (botChannelId === null) throw new UserError('voice.not_connected');
    // Stopping the reading for everyone: only a member in the call, or with Move Members.
    requirePlaybackControl(interaction, botChannelId);
    // Queued /say and /narrate replies are told why they were not read (VoiceControl.leave).
    if (!(await ctx.voiceControl.leave(guildId))) throw new UserError('voice.not_connected');
    await interaction.reply({ content: t(langOf(interaction.locale), 'voice.left') });
  },
} satisfies Command;
