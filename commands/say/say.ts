import { ApplicationCommandOptionType, InteractionContextType, type RESTPostAPIChatInputApplicationCommandsJSONBody } from 'discord.js';
import { described, named, STANDARD_PITCH_OPTION, STANDARD_SPEED_OPTION, type Command } from '../../src/discord/interactions/command.ts';
import { requireGuild } from '../../src/discord/interactions/guards.ts';
import { langOf } from '../../src/i18n/texts.ts';
import { readArgs } from '../../src/discord/interactions/command-args.ts';
import { requestSay } from './say-request.ts';
import { standardVoiceChoices } from '../../src/discord/interactions/voice-choices.ts';

const data = {
  ...named('say', 'しゃべる'),
  ...described('Read a text aloud with the standard voice', '文章を読み上げます（標準音声）'),
  contexts: [InteractionContextType.Guild],
  options: [
    {
      type: ApplicationCommandOptionType.String,
      ...named('text', '文章'),
      ...described('What to say', '読み上げる文章'),
      required: true,
      max_length: 1000,
    },
    {
      type: ApplicationCommandOptionType.String,
      ...named('voice', '声'),
      ...described('Voice id (default: yours or the server’s)', '声のID（省略時はあなたかサーバーの設定）'),
      autocomplete: true,
      max_length: 100,
    },
    STANDARD_SPEED_OPTION,
    STANDARD_PITCH_OPTION,
    {
      type: ApplicationCommandOptionType.Boolean,
      ...named('attach', '添付'),
      ...described('Attach the MP3 even when I am in a voice channel', 'ボイスチャンネルにいても MP3 を添付する'),
    },
  ],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

export default {
  data,
  async execute(interaction, ctx) {
    const guildId = requireGuild(interaction);
    const { text, voice, speed, pitch, attach } = readArgs(interaction, data.options);
    await requestSay(ctx.requests, interaction, {
      guildId,
      text,
      voice,
      speed,
      pitch,
      forceAttach: attach ?? false,
      lang: langOf(interaction.locale),
    });
  },
  async autocomplete(interaction) {
    await interaction.respond(standardVoiceChoices(interaction.options.getFocused(), langOf(interaction.locale)));
  },
} satisfies Command;
