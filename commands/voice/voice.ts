import {
  ApplicationCommandOptionType,
  InteractionContextType,
  MessageFlags,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import { described, named, STANDARD_PITCH_OPTION, STANDARD_SPEED_OPTION, type Command } from '../../src/discord/interactions/command.ts';
import { requireGuild } from '../../src/discord/interactions/guards.ts';
import { langOf, t } from '../../src/i18n/texts.ts';
import { VOLUME_RANGE } from '../../src/domain/member-settings.ts';
import { standardVoiceChoices } from '../../src/discord/interactions/voice-choices.ts';
import { NAME_SUBCOMMAND, runVoiceName } from './voice-name.ts';
import { PREVIEW_SUBCOMMAND, runVoicePreview } from './voice-preview.ts';
import { memberVoice, setMemberVoice, setMemberVolume } from '../../src/usecases/member-voice.ts';
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
    {
      type: ApplicationCommandOptionType.Subcommand,
      ...named('volume', '音量'),
      ...described('How loud your messages play in voice (0 to 2, 1 = as made)', 'ボイスチャンネルでのあなたの声の音量（0〜2、1が標準）'),
      options: [
        {
          type: ApplicationCommandOptionType.Number,
          ...named('value', '値'),
          ...described('Volume 0 to 2', '音量 0〜2'),
          required: true,
          min_value: VOLUME_RANGE.min,
          max_value: VOLUME_RANGE.max,
        },
      ],
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
    const { userSettings } = ctx.repos;
    await runSubcommand(interaction, data, {
      name: (args) => runVoiceName(interaction, ctx, guildId, lang, args),
      preview: (args) => runVoicePreview(interaction, ctx, guildId, lang, args),
      async reset() {
        // Their own choices only: a member must not undo an admin's mute or volume (or lose their read name).
        await userSettings.set(guildId, userId, { voice: null, speed: null, pitch: null, volume: null });
        await interaction.reply({ content: t(lang, 'uservoice.reset'), flags: MessageFlags.Ephemeral });
      },
      async set(args) {
        const voice = args.voice?.trim() || undefined;
        // Saved only once the service confirmed an unknown voice (one short request, charged like any other).
        if (voice && !isKnownVoice(ctx, voice)) await interaction.deferReply({ flags: MessageFlags.Ephemeral });
        await setMemberVoice(ctx, guildId, userId, { voice, speed: args.speed, pitch: args.pitch });
        const { voice: now, speed, pitch } = memberVoice(ctx, guildId, userId);
        const saved = { content: t(lang, 'uservoice.saved', { voice: now, speed, pitch }) };
        await (interaction.deferred ? interaction.editReply(saved) : interaction.reply({ ...saved, flags: MessageFlags.Ephemeral }));
      },
      async volume({ value }) {
        const saved = await setMemberVolume(ctx, guildId, userId, value);
        const content =
          saved.adminVolume === null
            ? t(lang, 'uservoice.volume_saved', { volume: saved.volume })
            : t(lang, 'uservoice.volume_admin', { own: value, volume: saved.adminVolume });
        await interaction.reply({ content, flags: MessageFlags.Ephemeral });
      },
      async show() {
        const user = userSettings.get(guildId, userId);
        const v = memberVoice(ctx, guildId, userId);
        const isDefault = user.voice === null && user.speed === null && user.pitch === null;
        const defaults = v.from === 'pool' ? t(lang, 'uservoice.pool_voice') : isDefault ? t(lang, 'uservoice.server_default') : '';
        await interaction.reply({
          content:
            t(lang, 'uservoice.show', { voice: v.voice, speed: v.speed, pitch: v.pitch, defaults }) +
            t(lang, v.adminVolume === null ? 'uservoice.volume_show' : 'uservoice.volume_show_admin', { volume: v.volume }) +
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
