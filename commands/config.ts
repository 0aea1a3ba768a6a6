import {
  ApplicationCommandOptionType,
  ChannelType,
  MessageFlags,
  type APIApplicationCommandBasicOption,
  type APIApplicationCommandSubcommandOption,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import { adminCommand, described, named, subcommand, type Command } from '../src/discord/command.ts';
import { BotError } from '../src/discord/errors.ts';
import { requireManageGuild } from '../src/discord/guards.ts';
import { langOf, t, type Lang } from '../src/discord/i18n.ts';
import type { GuildSettings, GuildSettingsPatch } from '../src/db/repositories.ts';
import { suggestVoices } from '../src/tts/voices.ts';
import { MEMBER_CONTROL_SUBCOMMANDS, runMemberControl, showMore } from '../src/discord/config-members.ts';
import { requireWithinCeiling, shownLimit } from '../src/discord/limits.ts';
import type { AppliedLimit } from '../src/billing/policy.ts';

// The option's type and its bounds; name and description are the same for every subcommand.
type ValueShape = { type: ApplicationCommandOptionType } & Record<string, unknown>;

/** A /config subcommand with one required `value` option of the given shape. */
const sub = (en: string, ja: string, descEn: string, descJa: string, value?: ValueShape): APIApplicationCommandSubcommandOption =>
  subcommand(en, ja, descEn, descJa, value ? [{ ...named('value', '値'), ...described('New value', '新しい値'), required: true, ...value } as APIApplicationCommandBasicOption] : undefined);

const data = {
  ...adminCommand('config', '設定', 'Server read-aloud settings (admins)', 'サーバーの読み上げ設定（管理者）'),
  options: [
    sub('show', '表示', 'Show the settings', '設定を表示'),
    sub('voice', '声', 'Default voice of the server', 'サーバーの標準の声', { type: ApplicationCommandOptionType.String, autocomplete: true, max_length: 100 }),
    sub('speed', '速さ', 'Default speed (0.3 to 4.0)', '標準の速さ（0.3〜4.0）', { type: ApplicationCommandOptionType.Number, min_value: 0.3, max_value: 4 }),
    sub('pitch', '高さ', 'Default pitch (-20 to 20)', '標準の高さ（-20〜20）', { type: ApplicationCommandOptionType.Number, min_value: -20, max_value: 20 }),
    sub('read-names', '名前読み上げ', "Read the author's name before a message", 'メッセージの前に名前を読む', { type: ApplicationCommandOptionType.Boolean }),
    sub('announce', '入退室通知', 'Announce members joining and leaving voice', 'ボイスチャンネルの入退室を読み上げる', { type: ApplicationCommandOptionType.Boolean }),
    sub('max-length', '最大文字数', 'Longest message read (characters, 10 to 500)', '読み上げる最大文字数（10〜500）', { type: ApplicationCommandOptionType.Integer, min_value: 10, max_value: 500 }),
    sub('user-limit', '利用上限', 'Monthly characters per member (0 = nobody)', '1人あたりの月間文字数（0で禁止）', { type: ApplicationCommandOptionType.Integer, min_value: 0, max_value: 1_000_000 }),
    {
      type: ApplicationCommandOptionType.Subcommand,
      ...named('auto-join', '自動参加'),
      ...described('Join this voice channel when the first member enters (empty: off)', '最初のメンバーが入ったら参加するボイスチャンネル（空でオフ）'),
      options: [{ type: ApplicationCommandOptionType.Channel, ...named('channel', 'チャンネル'), ...described('Voice channel', 'ボイスチャンネル'), channel_types: [ChannelType.GuildVoice, ChannelType.GuildStageVoice] }],
    },
    sub('ignore-prefix', '無視する接頭辞', 'Messages starting with this are not read (e.g. ;)', 'これで始まるメッセージは読まない（例: ;）', { type: ApplicationCommandOptionType.String, min_length: 1, max_length: 5 }),
    // Issue 13: settings that were stored but could not be set.
    ...MEMBER_CONTROL_SUBCOMMANDS,
  ],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

function show(lang: Lang, s: GuildSettings, limits: { guild: AppliedLimit; user: AppliedLimit }): string {
  const onOff = (b: boolean) => t(lang, b ? 'config.on' : 'config.off');
  return t(lang, 'config.show', {
    voice: s.voice,
    speed: s.speed,
    pitch: s.pitch,
    readNames: onOff(s.readAuthorNames),
    announce: onOff(s.announceJoinLeave),
    maxLength: s.maxLength,
    userLimit: shownLimit(lang, limits.user),
    autoJoin: s.autoJoinChannelId ? `<#${s.autoJoinChannelId}>` : t(lang, 'config.none'),
    prefix: s.ignorePrefix,
  }) + '\n' + showMore(lang, s, limits.guild);
}

export default {
  data,
  async execute(interaction, ctx) {
    const guildId = requireManageGuild(interaction);
    const lang = langOf(interaction.locale);
    const o = interaction.options;
    const name = o.getSubcommand();
    const repo = ctx.repos.guildSettings;
    if (name === 'show') {
      await interaction.reply({ content: show(lang, repo.get(guildId), ctx.budget.appliedLimits(guildId)), flags: MessageFlags.Ephemeral });
      return;
    }
    if (await runMemberControl(name, interaction, ctx, guildId, lang)) return;
    let patch: GuildSettingsPatch;
    let shown: string;
    switch (name) {
      case 'voice': {
        shown = o.getString('value', true).trim();
        if (!ctx.requests.isKnownVoice(shown)) {
          // Saved only once the service confirmed it (one short request, charged like any other).
          await interaction.deferReply();
          await ctx.requests.confirmVoice(shown, guildId, interaction.user.id);
        }
        patch = { voice: shown };
        break;
      }
      case 'speed': patch = { speed: o.getNumber('value', true) }; shown = String(patch.speed); break;
      case 'pitch': patch = { pitch: o.getNumber('value', true) }; shown = String(patch.pitch); break;
      case 'read-names': patch = { readAuthorNames: o.getBoolean('value', true) }; shown = t(lang, patch.readAuthorNames ? 'config.on' : 'config.off'); break;
      case 'announce': patch = { announceJoinLeave: o.getBoolean('value', true) }; shown = t(lang, patch.announceJoinLeave ? 'config.on' : 'config.off'); break;
      case 'max-length': patch = { maxLength: o.getInteger('value', true) }; shown = String(patch.maxLength); break;
      case 'user-limit': {
        const value = o.getInteger('value', true);
        requireWithinCeiling('member', value, ctx.budget.ceilings.userMonthlyLimit);
        patch = { userMonthlyLimit: value };
        shown = String(value);
        break;
      }
      case 'auto-join': {
        const channelId = o.getChannel('channel')?.id ?? null;
        patch = { autoJoinChannelId: channelId };
        shown = channelId ? `<#${channelId}>` : t(lang, 'config.off');
        break;
      }
      case 'ignore-prefix': shown = o.getString('value', true).trim(); patch = { ignorePrefix: shown }; break;
      default: throw new BotError('unknown_subcommand', { message: `unknown /config subcommand ${name}` });
    }
    await repo.update(guildId, patch);
    const saved = { content: t(lang, 'config.saved', { setting: name, value: shown }) };
    await (interaction.deferred ? interaction.editReply(saved) : interaction.reply(saved));
  },
  async autocomplete(interaction) {
    await interaction.respond(suggestVoices(interaction.options.getFocused()).map((v) => ({ name: v, value: v })));
  },
} satisfies Command;
