import {
  ApplicationCommandOptionType,
  ChannelType,
  MessageFlags,
  type APIApplicationCommandBasicOption,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import { adminCommand, described, named, shownSubcommand, subcommand, type Command } from '../../src/discord/interactions/command.ts';
import { commandActor, isVoiceChannelOf, requireManageGuild } from '../../src/discord/interactions/guards.ts';
import { langOf, t, type Lang } from '../../src/i18n/texts.ts';
import type { GuildSettings } from '../../src/domain/guild-settings.ts';
import { standardVoiceChoices } from '../../src/discord/interactions/voice-choices.ts';
import { MEMBER_CONTROL_SUBCOMMANDS, memberControls, showMore } from './config-members.ts';
import { VOICE_CONTROL_SUBCOMMANDS, voiceControls } from './config-voices.ts';
import { runSubcommand } from '../../src/discord/interactions/command-args.ts';
import { shownLimit } from '../../src/usecases/limits.ts';
import { changeGuildSettings, IGNORE_PREFIX_LENGTH, SETTING_RANGES, type SettingsChange } from '../../src/usecases/settings.ts';
import type { AppliedLimit } from '../../src/billing/policy.ts';
import { isKnownVoice } from '../../src/usecases/voices.ts';
import { readLimit } from '../../src/speech/text/fast-reading.ts';

// The option's type and its bounds; name and description are the same for every subcommand.
type ValueShape = { readonly type: ApplicationCommandOptionType } & Record<string, unknown>;
/** The `value` option of a setting: its shape, required, under the common name (typed for command-args.ts). */
type ValueOption<V extends ValueShape> = ReturnType<typeof named<'value'>> &
  ReturnType<typeof described> & { readonly required: true } & V &
  APIApplicationCommandBasicOption;

/** A /config subcommand with one required `value` option of the given shape. */
const sub = <const N extends string, const V extends ValueShape>(en: N, ja: string, descEn: string, descJa: string, value: V) =>
  subcommand(en, ja, descEn, descJa, [
    { ...named('value', '値'), ...described('New value', '新しい値'), required: true, ...value } as ValueOption<V>,
  ]);

const data = {
  ...adminCommand('config', '設定', 'Server read-aloud settings (admins)', 'サーバーの読み上げ設定（管理者）'),
  options: [
    subcommand('show', '表示', 'Show the settings', '設定を表示'),
    sub('voice', '声', 'Default voice of the server', 'サーバーの標準の声', {
      type: ApplicationCommandOptionType.String,
      autocomplete: true,
      max_length: 100,
    }),
    sub('speed', '速さ', 'Default speed (0.3 to 4.0)', '標準の速さ（0.3〜4.0）', {
      type: ApplicationCommandOptionType.Number,
      min_value: SETTING_RANGES.speed.min,
      max_value: SETTING_RANGES.speed.max,
    }),
    sub('pitch', '高さ', 'Default pitch (-20 to 20)', '標準の高さ（-20〜20）', {
      type: ApplicationCommandOptionType.Number,
      min_value: SETTING_RANGES.pitch.min,
      max_value: SETTING_RANGES.pitch.max,
    }),
    sub('read-names', '名前読み上げ', "Read the author's name before a message", 'メッセージの前に名前を読む', {
      type: ApplicationCommandOptionType.Boolean,
    }),
    sub('announce', '入退室通知', 'Announce members joining and leaving voice', 'ボイスチャンネルの入退室を読み上げる', {
      type: ApplicationCommandOptionType.Boolean,
    }),
    sub('max-length', '最大文字数', 'Longest message read (characters, 10 to 500)', '読み上げる最大文字数（10〜500）', {
      type: ApplicationCommandOptionType.Integer,
      min_value: SETTING_RANGES.maxLength.min,
      max_value: SETTING_RANGES.maxLength.max,
    }),
    sub(
      'fast-reading',
      '早口上限',
      'Read a longer message up to this many times faster (1.0 to 4.0; 1.0: cut it)',
      '最大文字数を超えたメッセージを最大何倍速で読むか（1.0〜4.0、1.0で早口にせず省略）',
      {
        type: ApplicationCommandOptionType.Number,
        min_value: SETTING_RANGES.fastReadingCeiling.min,
        max_value: SETTING_RANGES.fastReadingCeiling.max,
      },
    ),
    sub('user-limit', '利用上限', 'Monthly characters per member (0 = nobody)', '1人あたりの月間文字数（0で禁止）', {
      type: ApplicationCommandOptionType.Integer,
      min_value: SETTING_RANGES.userMonthlyLimit.min,
      max_value: SETTING_RANGES.userMonthlyLimit.max,
    }),
    {
      type: ApplicationCommandOptionType.Subcommand,
      ...named('auto-join', '自動参加'),
      ...described(
        'Join this voice channel when the first member enters (empty: off)',
        '最初のメンバーが入ったら参加するボイスチャンネル（空でオフ）',
      ),
      options: [
        {
          type: ApplicationCommandOptionType.Channel,
          ...named('channel', 'チャンネル'),
          ...described('Voice channel', 'ボイスチャンネル'),
          channel_types: [ChannelType.GuildVoice, ChannelType.GuildStageVoice],
        },
      ],
    },
    sub(
      'text-channels',
      '読み上げチャンネル数',
      'How many text channels one call may read (1 to 10)',
      '1つの通話で読み上げるテキストチャンネルの数（1〜10）',
      {
        type: ApplicationCommandOptionType.Integer,
        min_value: SETTING_RANGES.textChannelsPerCall.min,
        max_value: SETTING_RANGES.textChannelsPerCall.max,
      },
    ),
    sub(
      'ignore-prefix',
      '無視する接頭辞',
      'Messages starting with this are not read (e.g. ;)',
      'これで始まるメッセージは読まない（例: ;）',
      { type: ApplicationCommandOptionType.String, min_length: IGNORE_PREFIX_LENGTH.min, max_length: IGNORE_PREFIX_LENGTH.max },
    ),
    // Settings that were stored but could not be set.
    ...MEMBER_CONTROL_SUBCOMMANDS,
    ...VOICE_CONTROL_SUBCOMMANDS,
  ],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

function show(lang: Lang, s: GuildSettings, limits: { guild: AppliedLimit; user: AppliedLimit }, pool: readonly string[]): string {
  const onOff = (b: boolean) => t(lang, b ? 'config.on' : 'config.off');
  return (
    t(lang, 'config.show', {
      voice: s.voice,
      speed: s.speed,
      pitch: s.pitch,
      readNames: onOff(s.readAuthorNames),
      announce: onOff(s.announceJoinLeave),
      maxLength: s.maxLength,
      userLimit: shownLimit(lang, limits.user),
      autoJoin: s.autoJoinChannelId ? `<#${s.autoJoinChannelId}>` : t(lang, 'config.none'),
      prefix: s.ignorePrefix,
    }) +
    '\n' +
    t(lang, 'config.show_fast_reading', { value: fastReading(lang, s) }) +
    '\n' +
    showMore(lang, s, limits.guild) +
    '\n' +
    t(lang, 'voicepool.show', { voices: pool.length > 0 ? pool.join(', ') : t(lang, 'config.none') })
  );
}

/** What the fast-reading ceiling does with the server's max length, in words. */
function fastReading(lang: Lang, s: Pick<GuildSettings, 'maxLength' | 'fastReadingCeiling'>): string {
  const { maxLength, fastReadingCeiling: ceiling } = s;
  if (ceiling <= 1) return t(lang, 'config.fast_reading_off', { maxLength });
  return t(lang, 'config.fast_reading_on', { ceiling, maxLength, limit: readLimit(maxLength, ceiling) });
}

export default {
  data,
  async execute(interaction, ctx) {
    const guildId = requireManageGuild(interaction);
    const lang = langOf(interaction.locale);
    const repo = ctx.repos.guildSettings;
    const onOff = (b: boolean) => t(lang, b ? 'config.on' : 'config.off');
    /** Saves one setting (the dashboard's rules: src/usecases/settings.ts) and says what it is now. */
    const save = async (setting: string, patch: SettingsChange, shown: string) => {
      const isVoiceChannel = (id: string) => isVoiceChannelOf(interaction.client, guildId, id);
      if (patch.voice !== undefined && !isKnownVoice(ctx, patch.voice)) await interaction.deferReply();
      await changeGuildSettings(ctx, guildId, commandActor(interaction), patch, { isVoiceChannel });
      // Named as the member's client shows the subcommand, not by its English id.
      const saved = { content: t(lang, 'config.saved', { setting: shownSubcommand(data, setting, lang), value: shown }) };
      await (interaction.deferred ? interaction.editReply(saved) : interaction.reply(saved));
    };
    await runSubcommand(interaction, data, {
      async show() {
        await interaction.reply({
          content: show(lang, repo.get(guildId), ctx.budget.appliedLimits(guildId), ctx.repos.voicePool.list(guildId)),
          flags: MessageFlags.Ephemeral,
        });
      },
      // Saved only once the service confirmed an unknown voice (one short request, charged like any other).
      voice: ({ value }) => save('voice', { voice: value.trim() }, value.trim()),
      speed: ({ value }) => save('speed', { speed: value }, String(value)),
      pitch: ({ value }) => save('pitch', { pitch: value }, String(value)),
      'read-names': ({ value }) => save('read-names', { readAuthorNames: value }, onOff(value)),
      announce: ({ value }) => save('announce', { announceJoinLeave: value }, onOff(value)),
      'max-length': ({ value }) => save('max-length', { maxLength: value }, String(value)),
      'fast-reading': ({ value }) =>
        save('fast-reading', { fastReadingCeiling: value }, fastReading(lang, { ...repo.get(guildId), fastReadingCeiling: value })),
      'user-limit': ({ value }) => save('user-limit', { userMonthlyLimit: value }, String(value)),
      'auto-join': ({ channel }) =>
        save('auto-join', { autoJoinChannelId: channel ?? null }, channel ? `<#${channel}>` : t(lang, 'config.off')),
      'text-channels': ({ value }) => save('text-channels', { textChannelsPerCall: value }, String(value)),
      'ignore-prefix': ({ value }) => save('ignore-prefix', { ignorePrefix: value.trim() }, value.trim()),
      ...memberControls(interaction, ctx, guildId, lang),
      ...voiceControls(interaction, ctx, guildId, lang),
    });
  },
  async autocomplete(interaction) {
    await interaction.respond(standardVoiceChoices(interaction.options.getFocused(), langOf(interaction.locale)));
  },
} satisfies Command;
