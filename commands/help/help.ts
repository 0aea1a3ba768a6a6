import { InteractionContextType, MessageFlags, type RESTPostAPIChatInputApplicationCommandsJSONBody } from 'discord.js';
import { described, named, shownNames, slashCommands, type Command } from '../../src/discord/interactions/command.ts';
import { langOf, t } from '../../src/i18n/texts.ts';
import { loadCommands } from '../../src/discord/interactions/loader.ts';

const data = {
  ...named('help', 'ヘルプ'),
  ...described('How to use the read-aloud bot', '読み上げボットの使い方'),
  // Like every other command: servers only (the bot reads voice channels; a DM has none).
  contexts: [InteractionContextType.Guild],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

export default {
  data,
  async execute(interaction) {
    // Commands named as the member's client shows them (/参加 in Japanese), from their registered data.
    const lang = langOf(interaction.locale);
    const names = shownNames(
      slashCommands((await loadCommands()).values()).map((c) => c.data),
      lang,
    );
    await interaction.reply({ content: t(lang, 'help.text', names), flags: MessageFlags.Ephemeral });
  },
} satisfies Command;
