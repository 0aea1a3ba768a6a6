import { countChars } from '../tts/chars.ts';
import { TtsInputError } from '../tts/errors.ts';
import { LIMITS, validateStandard } from '../tts/validation.ts';
import { standardVoiceFacts } from '../tts/voices.ts';
import type { Lang } from '../i18n/texts.ts';
import { UserError } from '../i18n/errors.ts';
import type { SlidingLimit } from '../util/sliding-counts.ts';
import type { UseCaseDeps } from './deps.ts';
import { confirmVoice, isKnownVoice, precheckBudget } from './voices.ts';

// /voice preview: a short sample of a voice, in that voice's language, at the standard speed and
// pitch, so the audio cache keys it by voice and sample text alone: once a voice's sample is made,
// every later preview of it is a cache hit (no request, no characters). A preview is something the
// member asks for, so it counts as theirs: charged to their own monthly allowance (then the server's
// and the bot's, as any request), and at most PREVIEW_RATE previews per member, from the slash
// command and the dashboard together (admitPreview, the one use case both go through). Nothing is
// made before a member asks.

/** Previews one member may ask for in any window (both surfaces together): enough to compare a few voices, never a drain on the shared rate budget. */
export const PREVIEW_RATE = { max: 10, windowMs: 10 * 60_000 } as const satisfies SlidingLimit;

/** The sample read per language (a voice's language subtag); a voice of another or unknown language reads the member's. */
const SAMPLES: Record<string, { text: string; lang: Lang }> = {
  ja: { text: 'こんにちは、この声で読み上げます。', lang: 'ja' },
  en: { text: 'Hello, this is how I will read your messages.', lang: 'en' },
  cmn: { text: '你好，我会用这个声音朗读你的消息。', lang: 'en' },
  es: { text: 'Hola, así leeré tus mensajes.', lang: 'en' },
};

/** The sample text of `voice`: in its language when its id tells it, else in the member's. */
export function previewSample(voice: string, memberLang: Lang): { text: string; lang: Lang } {
  const language = standardVoiceFacts(voice).language?.split('-')[0];
  return (language !== undefined ? SAMPLES[language] : undefined) ?? SAMPLES[memberLang]!;
}

/** /voice preview's request: the sample of `voice` at the standard speed and pitch, checked, paid by the member who asks. */
export function previewRequest(userId: string, voice: string, lang: Lang) {
  const sample = previewSample(voice, lang);
  const speed = LIMITS.standardSpeed.default;
  const pitch = LIMITS.standardPitch.default;
  const checked = validateStandard({ voice, text: sample.text, speed, pitch });
  if (!checked.ok) throw new TtsInputError({ issues: checked.issues });
  return { sample, voice, speed, pitch, payer: userId, chars: countChars(sample.text) };
}

/**
 * Admits one preview of `voice` for a member, from either surface: the sample checked, the
 * member's own allowance (and the server's and the bot's) asked first, then one of the member's
 * PREVIEW_RATE previews taken. Throws what to tell the member (nothing is made); returns the request.
 */
export async function admitPreview(
  ctx: Pick<UseCaseDeps, 'budget' | 'onRefused' | 'previews'>,
  guildId: string,
  userId: string,
  voice: string,
  lang: Lang,
): Promise<ReturnType<typeof previewRequest>> {
  const p = previewRequest(userId, voice, lang);
  await precheckBudget(ctx, guildId, p.payer, 'standard', p.chars);
  // Taken after the budget's answer (the window counts only previews that go ahead) and in one
  // synchronous step, so two previews asked at once cannot both take the last one.
  const waitMs = ctx.previews.take(userId);
  if (waitMs > 0) {
    const { max, windowMs } = ctx.previews.limit;
    throw new UserError('uservoice.preview_rate', { vars: { max, window: windowMs / 60_000, minutes: Math.ceil(waitMs / 60_000) } });
  }
  return p;
}

/**
 * The preview as audio for the web dashboard: admitted as /voice preview is (the member's
 * allowance, their previews' rate), made through the same pipeline (the cache, the budgets, the
 * rate budget).
 */
export async function previewAudio(
  ctx: Pick<UseCaseDeps, 'budget' | 'onRefused' | 'voices' | 'synthesizer' | 'previews'>,
  guildId: string,
  userId: string,
  voice: string,
  lang: Lang,
) {
  const p = await admitPreview(ctx, guildId, userId, voice, lang);
  // An id not on the known list is confirmed first, by the member, as /voice set and /say do.
  if (!isKnownVoice(ctx, voice)) await confirmVoice(ctx, voice, guildId, userId);
  return ctx.synthesizer.synthesize(
    {
      guildId,
      endpoint: 'standard',
      text: p.sample.text,
      voice,
      speed: p.speed,
      pitch: p.pitch,
      charges: [{ guildId, userId: p.payer, endpoint: 'standard', chars: p.chars }],
    },
    { signal: AbortSignal.timeout(30_000) },
  );
}
