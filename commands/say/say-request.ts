import type { ChatInputCommandInteraction } from 'discord.js';
import type { UtteranceInput } from '../../src/speech/queue/utterance.ts';
import { countChars } from '../../src/tts/chars.ts';
import { fastSpeed } from '../../src/speech/text/fast-reading.ts';
import { TtsInputError } from '../../src/tts/errors.ts';
import { validateStandard } from '../../src/tts/validation.ts';
import type { Lang } from '../../src/i18n/texts.ts';
import type { SpeechRequests } from '../../src/discord/interactions/speech-requests.ts';

interface SayArgs {
  guildId: string;
  lang: Lang;
  text: string;
  voice?: string | undefined;
  speed?: number | undefined;
  pitch?: number | undefined;
  forceAttach?: boolean;
}

/** Longest /say text after normalisation (Discord caps the option at 1000 anyway). */
const SAY_MAX_CHARS = 1000;

/** /say: checks everything that can be checked before answering, then queues the speech. */
export async function requestSay(requests: SpeechRequests, interaction: ChatInputCommandInteraction, args: SayArgs): Promise<void> {
  const userId = interaction.user.id;
  const settings = requests.memberVoice(interaction, args.guildId);
  const voice = args.voice?.trim() || settings.voice;
  const pitch = args.pitch ?? settings.pitch;
  const text = requests.speakable(interaction, args, SAY_MAX_CHARS);
  // Not cut at the server's max length (its own limit is SAY_MAX_CHARS), but read faster past it as chat is.
  const server = requests.repos.guildSettings.get(args.guildId);
  const speed = fastSpeed(args.speed ?? settings.speed, countChars(text), server.maxLength, server.fastReadingCeiling);
  const checked = validateStandard({ voice, text, speed, pitch });
  if (!checked.ok) throw new TtsInputError({ issues: checked.issues });
  await requests.precheck(args.guildId, userId, 'standard', countChars(text));
  const input: UtteranceInput = {
    guildId: args.guildId,
    userId,
    channelId: interaction.channelId,
    kind: 'say',
    text,
    lang: args.lang,
    voice,
    speed,
    pitch,
    ...(settings.volume === 1 ? {} : { volume: settings.volume }),
  };
  requests.checkMemberQueue(input);
  if (!requests.isKnownVoice(voice)) {
    // The confirming request may wait for the rate budget: answer Discord first.
    await interaction.deferReply();
    await requests.confirmVoice(voice, args.guildId, userId);
  }
  await requests.enqueue(interaction, input, { forceAttach: args.forceAttach ?? false });
}
