import { InteractionContextType, type RESTPostAPIChatInputApplicationCommandsJSONBody } from 'discord.js';
import { described, named, type Command } from '../../src/discord/interactions/command.ts';
import { UserError } from '../../src/i18n/errors.ts';
import { memberVoiceChannel, requireGuild } from '../../src/discord/interactions/guards.ts';
import { requirePlaybackControl } from '../../src/discord/voice-control/playback-rule.ts';
import { langOf, t } from '../../src/i18n/texts.ts';

const data = {
  ...named('skip', 'スキップ'),
  ...described('Skip the message being read now', '読み上げ中のメッセージを1件スキップします'),
  contexts: [InteractionContextType.Guild],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

export default {
  data,
  async execute(interaction, ctx) {
    const guildId = requireGuild(interaction);
    // The session of the member's voice channel (or of this text channel): the others keep playing.
    const session = ctx.voiceControl.sessionFor(guildId, memberVoiceChannel(interaction), interaction.channelId);
    requirePlaybackControl(interaction, session?.channelId ?? null);
    if (!ctx.voiceControl.skip(guildId, session)) throw new UserError('voice.nothing_to_skip');
    await interaction.reply({ content: t(langOf(interaction.locale), 'voice.skipped') });
  },
} satisfies Command;
