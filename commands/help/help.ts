import { InteractionContextType, MessageFlags, type RESTPostAPIChatInputApplicationCommandsJSONBody } from 'discord.js';
import { described, named, type Command } from '../../src/discord/command.ts';
import { langOf, t } from '../../src/discord/i18n.ts';

const data = {
  ...named('help', 'ヘルプ'),
  ...described('How to use the read-aloud bot', '読み上げボットの使い方'),
  // Like every other command: servers only (the bot reads voice channels; a DM has none).
  contexts: [InteractionContextType.Guild],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

export default {
  data,
  async execute(interaction) {
    await interaction.reply({ content: t(langOf(interaction.locale), 'help.text'), flags: MessageFlags.Ephemeral });
  },
} satisfies Command;
