/**
 * Standard voice ids people use (from the service's voice list). The service's list is longer and
 * grows without notice, so this is for suggestions only: the service is the authority on whether a
 * voice exists (`Unsupported voice requested.`), and unknown ids are passed through.
 */
import { ADVANCED_FEMALE_VOICES, ADVANCED_MALE_VOICES } from './validation.ts';
export const KNOWN_STANDARD_VOICES = [
  'ja-JP-Wavenet-A',
  'ja-JP-Wavenet-B',
  'ja-JP-Wavenet-C',
  'ja-JP-Wavenet-D',
  'ja-JP-NanamiNeural',
  'ja-JP-NanamiNeural_cs',
  'ja-JP-KeitaNeural',
  'ja-JP-AoiNeural',
  'ja-JP-DaichiNeural',
  'ja-JP-MayuNeural',
  'ja-JP-NaokiNeural',
  'ja-JP-ShioriNeural',
  'ja-JP-JennyMultilingualV2Neural',
  'ja-JP-Mizuki',
  'ja-JP-Takumi',
  'ja-JP-Takumi-NTTS',
  'en-US-Wavenet-A',
  'en-US-Wavenet-B',
  'en-US-Wavenet-C',
  'en-US-Wavenet-D',
  'en-US-Wavenet-E',
  'en-US-Wavenet-F',
  'en-US-Neural2-A',
  'en-US-JennyNeural',
  'en-US-GuyNeural',
  'en-US-AriaNeural',
  'Joanna',
  'Matthew',
  'Salli',
  'Ivy',
  'Joey',
  'Justin',
  'Kendra',
  'Kevin',
  'Kimberly',
  'cmn-CN-Wavenet-A',
  'es-ES-Standard-A',
] as const;

type VoiceGender = 'female' | 'male' | 'unknown';

/** What is known about a voice: its language (a BCP 47 tag, null when unknown) and gender. */
export interface VoiceFacts {
  language: string | null;
  gender: VoiceGender;
}

// A standard id that starts with a locale encodes its language (`ja-JP-Wavenet-B`: ja-JP). The bare
// Polly-style names on the known list are English voices (shared notes: service facts, Standard voices).
const LOCALE_PREFIX = /^([a-z]{2,3})-([A-Z]{2})-/;
const BARE_ENGLISH = new Set<string>(['Joanna', 'Matthew', 'Salli', 'Ivy', 'Joey', 'Justin', 'Kendra', 'Kevin', 'Kimberly']);

// The known standard ids are the engines' own voice names (Google Cloud Text-to-Speech, Azure
// Speech, Amazon Polly), whose published voice lists give each voice's gender; this is that list's
// word for the ids above. An id the list does not name (ja-JP-NanamiNeural_cs is the service's own
// variant, and the service's list grows) stays unknown: never a guess from a letter.
const STANDARD_FEMALE = new Set<string>([
  'ja-JP-Wavenet-A',
  'ja-JP-Wavenet-B',
  'ja-JP-NanamiNeural',
  'ja-JP-AoiNeural',
  'ja-JP-MayuNeural',
  'ja-JP-ShioriNeural',
  'ja-JP-JennyMultilingualV2Neural',
  'ja-JP-Mizuki',
  'en-US-Wavenet-C',
  'en-US-Wavenet-E',
  'en-US-Wavenet-F',
  'en-US-JennyNeural',
  'en-US-AriaNeural',
  'Joanna',
  'Salli',
  'Ivy',
  'Kendra',
  'Kimberly',
  'cmn-CN-Wavenet-A',
  'es-ES-Standard-A',
]);
const STANDARD_MALE = new Set<string>([
  'ja-JP-Wavenet-C',
  'ja-JP-Wavenet-D',
  'ja-JP-KeitaNeural',
  'ja-JP-DaichiNeural',
  'ja-JP-NaokiNeural',
  'ja-JP-Takumi',
  'ja-JP-Takumi-NTTS',
  'en-US-Wavenet-A',
  'en-US-Wavenet-B',
  'en-US-Wavenet-D',
  'en-US-Neural2-A',
  'en-US-GuyNeural',
  'Matthew',
  'Joey',
  'Justin',
  'Kevin',
]);

/** The language and gender of a standard voice id, as far as its id and the engines' voice lists tell. */
export function standardVoiceFacts(voice: string): VoiceFacts {
  const gender = STANDARD_FEMALE.has(voice) ? 'female' : STANDARD_MALE.has(voice) ? 'male' : 'unknown';
  const locale = LOCALE_PREFIX.exec(voice);
  if (locale) return { language: `${locale[1]}-${locale[2]}`, gender };
  return { language: BARE_ENGLISH.has(voice) ? 'en' : null, gender };
}

// The advanced voices' genders, as the service names them (validation.ts).
const ADVANCED_FEMALE = new Set<string>(ADVANCED_FEMALE_VOICES);
const ADVANCED_MALE = new Set<string>(ADVANCED_MALE_VOICES);

/** An advanced voice's gender (its language is whatever the text is in: null). */
export function advancedVoiceFacts(voice: string): VoiceFacts {
  const gender = ADVANCED_FEMALE.has(voice) ? 'female' : ADVANCED_MALE.has(voice) ? 'male' : 'unknown';
  return { language: null, gender };
}
