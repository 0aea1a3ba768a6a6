import {
  ApplicationCommandOptionType,
  MessageFlags,
  type APIApplicationCommandSubcommandOption,
  type ChatInputCommandInteraction,
} from 'discord.js';
import { memberVoice } from '../../src/usecases/member-voice.ts';
import { described, named } from '../../src/discord/interactions/command.ts';
import type { ArgsOf } from '../../src/discord/interactions/command-args.ts';
import type { BotContext } from '../../src/discord/interactions/context.ts';
import type { Lang } from '../../src/i18n/texts.ts';
import { textAudience, type UtteranceInput, voiceAudience } from '../../src/speech/queue/utterance.ts';
import { admitPreview, previewRequest } from '../../src/usecases/previews.ts';
import { confirmVoice, isKnownVoice } from '../../src/usecases/voices.ts';

// /voice preview: the sample (src/usecases/previews.ts) played in the member's call, or attached
// for them alone.

export const PREVIEW_SUBCOMMAND = {
  type: ApplicationCommandOptionType.Subcommand,
  ...named('preview', '試聴'),
  ...described('Hear a short sample of a voice', '声のサンプルを聞く'),
  options: [
    {
      type: ApplicationCommandOptionType.String,
      ...named('voice', '声'),
      ...described('Voice id (default: yours)', '声のID（省略時はあなたの声）'),
      autocomplete: true,
      max_length: 100,
    },
  ],
} as const satisfies APIApplicationCommandSubcommandOption;

/** /voice preview's arguments, as its data declares them. */
type VoicePreviewArgs = ArgsOf<typeof PREVIEW_SUBCOMMAND.options>;

/** Plays the sample in the member's voice channel when one of the bot's accounts is there; otherwise attaches it, privately. */
export async function runVoicePreview(
  interaction: ChatInputCommandInteraction,
  ctx: BotContext,
  guildId: string,
  lang: Lang,
  args: VoicePreviewArgs,
): Promise<void> {
  const userId = interaction.user.id;
  const { requests } = ctx;
  const voice = args.voice?.trim() || memberVoice(ctx, guildId, userId).voice;
  const { sample, speed, pitch, payer } = previewRequest(userId, voice, lang);
  const input: UtteranceInput = {
    guildId,
    userId: payer,
    channelId: interaction.channelId,
    kind: 'say',
    text: sample.text,
    lang: sample.lang,
    voice,
    speed,
    pitch,
  };
  // A full queue refuses before one of the member's previews is taken.
  requests.checkMemberQueue(input);
  await admitPreview(ctx, guildId, userId, voice, lang);
  // Private from here on: the sample is for the member who asked (the reply, or the file).
  await interaction.deferReply({ flags: MessageFlags.Ephemeral });
  // An id not on the known list is confirmed first, by the member, as /voice set and /say do.
  if (!isKnownVoice(ctx, voice)) await confirmVoice(ctx, voice, guildId, userId);
  const memberChannel = interaction.guild?.voiceStates.cache.get(userId)?.channelId ?? null;
  // Played only in the call the member listens in, by the account there (whichever session the text
  // channel is bound to); anywhere else the others would hear it instead, so it is attached.
  const played = memberChannel !== null && ctx.voice.isConnected(guildId, memberChannel);
  const audience = played ? voiceAudience(memberChannel) : textAudience(interaction.channelId);
  await requests.enqueue(interaction, { ...input, audience }, played ? {} : { attachOnly: true });
}
