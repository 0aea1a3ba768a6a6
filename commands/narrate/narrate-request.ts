import type { ChatInputCommandInteraction } from 'discord.js';
import type { UtteranceInput } from '../../src/speech/queue/utterance.ts';
import { countChars } from '../../src/tts/chars.ts';
import { TtsInputError } from '../../src/tts/errors.ts';
import { validateAdvanced, type AdvancedVoice } from '../../src/tts/validation.ts';
import type { Lang } from '../../src/i18n/texts.ts';
import type { SpeechRequests } from '../../src/discord/interactions/speech-requests.ts';
import { askNarrateCost } from './narrate-confirm.ts';
import { effectiveVolume } from '../../src/domain/member-settings.ts';

interface NarrateArgs {
  guildId: string;
  lang: Lang;
  text: string;
  voice?: string | undefined;
  tone?: string | undefined;
  model?: 'flash' | 'pro' | undefined;
  speed?: number | undefined;
  pitch?: number | undefined;
  seed?: number | undefined;
}

/** Longest /narrate text (the service's advanced limit). */
const NARRATE_MAX_CHARS = 3000;
const DEFAULT_ADVANCED_VOICE = 'Ruby';

/** /narrate: advanced job; progress is shown by editing the deferred reply. */
export async function requestNarrate(requests: SpeechRequests, interaction: ChatInputCommandInteraction, args: NarrateArgs): Promise<void> {
  const userId = interaction.user.id;
  const text = requests.speakable(interaction, args, NARRATE_MAX_CHARS);
  const advanced = {
    voice: (args.voice ?? DEFAULT_ADVANCED_VOICE) as AdvancedVoice,
    ...(args.tone ? { tone: args.tone } : {}),
    ...(args.model ? { model: args.model } : {}),
    ...(args.seed !== undefined ? { seed: args.seed } : {}),
    ...(args.speed !== undefined ? { speed: args.speed } : {}),
    ...(args.pitch !== undefined ? { pitch: args.pitch } : {}),
  };
  const checked = validateAdvanced({ text, ...advanced }, requests.plan);
  if (!checked.ok) throw new TtsInputError({ issues: checked.issues });
  const chars = countChars(text);
  await requests.precheck(args.guildId, userId, 'advanced', chars);
  // Played at the member's volume, as their chat is.
  const volume = effectiveVolume(requests.repos.userSettings.get(args.guildId, userId));
  const input: UtteranceInput = {
    guildId: args.guildId,
    userId,
    channelId: interaction.channelId,
    kind: 'narrate',
    text,
    lang: args.lang,
    voice: advanced.voice,
    speed: advanced.speed ?? 1,
    pitch: advanced.pitch ?? 0,
    advanced,
    ...(volume === 1 ? {} : { volume }),
  };
  const buttons = requests.buttons;
  if (buttons && chars > requests.repos.controls.get(args.guildId).narrateConfirmChars) {
    // Shown before it is spent: nothing held or sent until the member confirms.
    requests.checkMemberQueue(input);
    await askNarrateCost(
      { budget: requests.budget, buttons },
      interaction,
      { guildId: args.guildId, userId, chars, lang: args.lang },
      {
        recheck: () => requests.precheck(args.guildId, userId, 'advanced', chars),
        proceed: (click) => requests.enqueue(click, input, { advancedVoice: advanced.voice }),
      },
    );
    return;
  }
  await requests.enqueue(interaction, input, { advancedVoice: advanced.voice });
}
