import { InteractionContextType, type RESTPostAPIChatInputApplicationCommandsJSONBody } from 'discord.js';
import { described, named, type Command } from '../../src/discord/interactions/command.ts';
import { memberVoiceChannel, requireGuild } from '../../src/discord/interactions/guards.ts';
import { requirePlaybackControl } from '../../src/discord/voice-control/playback-rule.ts';
import { langOf, t } from '../../src/i18n/texts.ts';

const data = {
  ...named('clear', 'クリア'),
  ...described('Clear every message waiting to be read', '読み上げ待ちのメッセージをすべて削除します'),
  contexts: [InteractionContextType.Guild],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

export default {
  data,
  async execute(interaction, ctx) {
    const guildId = requireGuild(interaction);
    // The session of the member's voice channel (or of this text channel): another channel's queue is left alone.
    const session = ctx.voiceControl.sessionFor(guildId, memberVoiceChannel(interaction), interaction.channelId);
    requirePlaybackControl(interaction, session?.channelId ?? null);
    const count = ctx.voiceControl.clear(guildId, session);
    await interaction.reply({ content: t(langOf(interaction.locale), 'voice.cleared', { count }) });
  },
} satisfies Command;
