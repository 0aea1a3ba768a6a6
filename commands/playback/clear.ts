import { InteractionContextType, type RESTPostAPIChatInputApplicationCommandsJSONBody } from 'discord.js';
import { described, named, type Command } from '../../src/discord/interactions/command.ts';
import { requireGuild, requirePlaybackControl } from '../../src/discord/interactions/guards.ts';
import { langOf, t } from '../../src/discord/i18n.ts';

const data = {
  ...named('clear', 'クリア'),
  ...described('Clear every message waiting to be read', '読み上げ待ちのメッセージをすべて削除します'),
  contexts: [InteractionContextType.Guild],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

export default {
  data,
  async execute(interaction, ctx) {
    const guildId = requireGuild(interaction);
    requirePlaybackControl(interaction, ctx.voice.voiceChannel(guildId));
    const count = ctx.voiceControl.clear(guildId);
    await interaction.reply({ content: t(langOf(interaction.locale), 'voice.cleared', { count }) });
  },
} satisfies Command;
