import {
  ApplicationCommandOptionType,
  MessageFlags,
  type APIApplicationCommandSubcommandOption,
  type ChatInputCommandInteraction,
} from 'discord.js';
import { choice, described, named } from '../../src/discord/interactions/command.ts';
import type { BotContext } from '../../src/discord/interactions/context.ts';
import { commandActor } from '../../src/discord/interactions/guards.ts';
import { t, type Lang } from '../../src/i18n/texts.ts';
import { UserError } from '../../src/i18n/errors.ts';
import { VOLUME_RANGE } from '../../src/domain/member-settings.ts';
import { VOICE_ID_MAX, VOICE_POOL_MAX } from '../../src/domain/voice-pool.ts';
import { addPoolVoice, removePoolVoice } from '../../src/usecases/voice-pool.ts';
import { isKnownVoice } from '../../src/usecases/voices.ts';
import { setAdminVolume } from '../../src/usecases/settings.ts';
import type { SubcommandHandlers } from '../../src/discord/interactions/command-args.ts';

// /config subcommands that tell voices apart and even them out: the server's voice pool (members
// without a voice of their own are given one of its voices each) and a member's volume set by an
// admin. The rules are the dashboard's too (src/usecases/voice-pool.ts, settings.ts).

export const VOICE_CONTROL_SUBCOMMANDS = [
  {
    type: ApplicationCommandOptionType.Subcommand,
    ...named('voice-pool', '声の候補'),
    ...described(
      `Voices given to members without their own, one each (up to ${VOICE_POOL_MAX})`,
      `自分の声を決めていないメンバーに1人ずつ割り当てる声（${VOICE_POOL_MAX}個まで）`,
    ),
    options: [
      {
        type: ApplicationCommandOptionType.String,
        ...named('action', '操作'),
        ...described('Add, remove or list', '追加・削除・一覧'),
        required: true,
        choices: [choice('add', '追加', 'add'), choice('remove', '削除', 'remove'), choice('list', '一覧', 'list')],
      },
      {
        type: ApplicationCommandOptionType.String,
        ...named('voice', '声'),
        ...described('Voice id (to add or remove)', '声のID（追加・削除するとき）'),
        autocomplete: true,
        max_length: VOICE_ID_MAX,
      },
    ],
  },
  {
    type: ApplicationCommandOptionType.Subcommand,
    ...named('volume', '音量'),
    ...described(
      "Set how loud a member's messages play in voice (empty: their own choice)",
      'メンバーの声の音量を設定（空で本人の設定に戻す）',
    ),
    options: [
      { type: ApplicationCommandOptionType.User, ...named('member', 'メンバー'), ...described('Member', 'メンバー'), required: true },
      {
        type: ApplicationCommandOptionType.Number,
        ...named('value', '値'),
        ...described('Volume 0 to 2 (1 = as made)', '音量 0〜2（1が標準）'),
        min_value: VOLUME_RANGE.min,
        max_value: VOLUME_RANGE.max,
      },
    ],
  },
] as const satisfies readonly APIApplicationCommandSubcommandOption[];

/** The pool as a reply lists it. */
function poolText(lang: Lang, pool: readonly string[], serverVoice: string): string {
  if (pool.length === 0) return t(lang, 'voicepool.none', { voice: serverVoice });
  return t(lang, 'voicepool.list', { count: pool.length, max: VOICE_POOL_MAX, voices: pool.map((v) => `\`${v}\``).join(', ') });
}

/** The handlers of VOICE_CONTROL_SUBCOMMANDS (the caller checked Manage Server). Bad input is refused before anything is written. */
export function voiceControls(
  interaction: ChatInputCommandInteraction,
  ctx: BotContext,
  guildId: string,
  lang: Lang,
): SubcommandHandlers<{ options: typeof VOICE_CONTROL_SUBCOMMANDS }> {
  const serverVoice = () => ctx.repos.guildSettings.get(guildId).voice;
  return {
    async 'voice-pool'({ action, voice }) {
      if (action === 'list') {
        await interaction.reply({
          content: poolText(lang, ctx.repos.voicePool.list(guildId), serverVoice()),
          flags: MessageFlags.Ephemeral,
        });
        return;
      }
      const typed = voice?.trim() ?? '';
      if (typed === '') throw new UserError('voicepool.voice_missing');
      if (action === 'remove') {
        const pool = await removePoolVoice(ctx, guildId, commandActor(interaction), typed);
        await interaction.reply({ content: `${t(lang, 'voicepool.removed', { voice: typed })}\n${poolText(lang, pool, serverVoice())}` });
        return;
      }
      // Saved only once the service confirmed an unknown voice (one short request, charged like any other).
      if (!isKnownVoice(ctx, typed)) await interaction.deferReply();
      const pool = await addPoolVoice(ctx, guildId, commandActor(interaction), typed);
      const saved = { content: `${t(lang, 'voicepool.added', { voice: typed })}\n${poolText(lang, pool, serverVoice())}` };
      await (interaction.deferred ? interaction.editReply(saved) : interaction.reply(saved));
    },
    async volume({ member, value }) {
      const isBot = member === interaction.client.user.id;
      const volume = await setAdminVolume(ctx, guildId, commandActor(interaction), { id: member, isBot }, value ?? null);
      const own = ctx.repos.userSettings.get(guildId, member).volume ?? 1;
      await interaction.reply({
        content:
          volume === null
            ? t(lang, 'config.volume_cleared', { member: `<@${member}>`, volume: own })
            : t(lang, 'config.volume_set', { member: `<@${member}>`, volume }),
        allowedMentions: { parse: [] },
      });
    },
  };
}
