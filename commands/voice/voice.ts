import {
  ApplicationCommandOptionType,
  InteractionContextType,
  MessageFlags,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import { described, named, STANDARD_PITCH_OPTION, STANDARD_SPEED_OPTION, type Command } from '../../src/discord/interactions/command.ts';
import { requireGuild } from '../../src/discord/interactions/guards.ts';
import { langOf, t } from '../../src/i18n/texts.ts';
import { effectiveVoice } from '../../src/domain/member-settings.ts';
import { standardVoiceChoices } from '../../src/discord/interactions/voice-choices.ts';
import { NAME_SUBCOMMAND, runVoiceName } from './voice-name.ts';
import { PREVIEW_SUBCOMMAND, runVoicePreview } from './voice-preview.ts';
import { setMemberVoice } from '../../src/usecases/member-voice.ts';
import { runSubcommand } from '../../src/discord/interactions/command-args.ts';
import { isKnownVoice } from '../../src/usecases/voices.ts';

const data = {
  ...named('voice', 'マイボイス'),
  ...described('Your own voice, speed and pitch in this server', 'このサーバーでのあなたの声・速さ・高さ'),
  contexts: [InteractionContextType.Guild],
  options: [
    {
      type: ApplicationCommandOptionType.Subcommand,
      ...named('set', '設定'),
      ...described('Choose your voice', 'あなたの声を設定'),
      options: [
        {
          type: ApplicationCommandOptionType.String,
          ...named('voice', '声'),
          ...described('Voice id', '声のID'),
          autocomplete: true,
          max_length: 100,
        },
        STANDARD_SPEED_OPTION,
        STANDARD_PITCH_OPTION,
      ],
    },
    { type: ApplicationCommandOptionType.Subcommand, ...named('show', '表示'), ...described('Show your voice', 'あなたの声を表示') },
    {
      type: ApplicationCommandOptionType.Subcommand,
      ...named('reset', 'リセット'),
      ...described("Go back to the server's default", 'サーバーの標準に戻す'),
    },
    NAME_SUBCOMMAND,
    PREVIEW_SUBCOMMAND,
  ],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

export default {
  data,
  async execute(interaction, ctx) {
    const guildId = requireGuild(interaction);
    const lang = langOf(interaction.locale);
    const userId = interaction.user.id;
    const { userSettings, guildSettings } = ctx.repos;
    await runSubcommand(interaction, data, {
      name: (args) => runVoiceName(interaction, ctx, guildId, lang, args),
      preview: (args) => runVoicePreview(interaction, ctx, guildId, lang, args),
      async reset() {
        // Voice, speed and pitch only: a member must not undo an admin's mute (or lose their read name).
        await userSettings.set(guildId, userId, { voice: null, speed: null, pitch: null });
        await interaction.reply({ content: t(lang, 'uservoice.reset'), flags: MessageFlags.Ephemeral });
      },
      async set(args) {
        const voice = args.voice?.trim() || undefined;
        // Saved only once the service confirmed an unknown voice (one short request, charged like any other).
        if (voice && !isKnownVoice(ctx, voice)) await interaction.deferReply({ flags: MessageFlags.Ephemeral });
        const user = await setMemberVoice(ctx, guildId, userId, { voice, speed: args.speed, pitch: args.pitch });
        const v = effectiveVoice(guildSettings.get(guildId), user);
        const saved = { content: t(lang, 'uservoice.saved', v) };
        await (interaction.deferred ? interaction.editReply(saved) : interaction.reply({ ...saved, flags: MessageFlags.Ephemeral }));
      },
      async show() {
        const user = userSettings.get(guildId, userId);
        const v = effectiveVoice(guildSettings.get(guildId), user);
        const isDefault = user.voice === null && user.speed === null && user.pitch === null;
        await interaction.reply({
          content:
            t(lang, 'uservoice.show', { ...v, defaults: isDefault ? t(lang, 'uservoice.server_default') : '' }) +
            (user.nickname ? t(lang, 'uservoice.name_show', { name: user.nickname }) : ''),
          flags: MessageFlags.Ephemeral,
        });
      },
    });
  },
  async autocomplete(interaction) {
    await interaction.respond(standardVoiceChoices(interaction.options.getFocused(), langOf(interaction.locale)));
  },
} satisfies Command;
