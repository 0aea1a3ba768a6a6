import { InteractionContextType, type RESTPostAPIChatInputApplicationCommandsJSONBody } from 'discord.js';
import { described, named, type Command } from '../../src/discord/interactions/command.ts';
import { UserError } from '../../src/i18n/errors.ts';
import { memberVoiceChannel, requireGuild } from '../../src/discord/interactions/guards.ts';
import { requirePlaybackControl } from '../../src/discord/voice-control/playback-rule.ts';
import { langOf, t } from '../../src/i18n/texts.ts';
import { askWhatToLeave } from './read-channels.ts';

const data = {
  ...named('leave', '退出'),
  ...described('Leave the voice channel and stop reading', 'ボイスチャンネルから退出し、読み上げをやめます'),
  contexts: [InteractionContextType.Guild],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

export default {
  data,
  async execute(interaction, ctx) {
    const guildId = requireGuild(interaction);
    // The session of the member's voice channel (or of this text channel); the others keep reading.
    const session = ctx.voiceControl.sessionFor(guildId, memberVoiceChannel(interaction), interaction.channelId);
    if (!session) throw new UserError('voice.not_connected');
    // Stopping the reading for everyone: only a member in the call, or with Move Members.
    requirePlaybackControl(interaction, session.channelId);
    const lang = langOf(interaction.locale);
    // One of several text channels the call reads: just this one, or the call? (read-channels.ts)
    if (await askWhatToLeave(interaction, ctx, session, lang)) return;
    // Queued /say and /narrate replies are told why they were not read (VoiceControl.leave).
    if (!(await ctx.voiceControl.leave(session))) throw new UserError('voice.not_connected');
    await interaction.reply({ content: t(lang, 'voice.left') });
  },
} satisfies Command;
