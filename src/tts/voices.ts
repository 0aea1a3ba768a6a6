/**
 * Standard voice ids people use (from the service's voice list). The service's list is longer and
 * grows without notice, so this is for suggestions only: the service is the authority on whether a
 * voice exists (`Unsupported voice requested.`), and unknown ids are passed through.
 */
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

/** Up to 25 suggestions (Discord's autocomplete maximum) matching what the user typed. */
export function suggestVoices(typed: string, limit = 25): string[] {
  const q = typed.trim().toLowerCase();
  const starts = KNOWN_STANDARD_VOICES.filter((v) => v.toLowerCase().startsWith(q));
  const contains = KNOWN_STANDARD_VOICES.filter((v) => !v.toLowerCase().startsWith(q) && v.toLowerCase().includes(q));
  return [...starts, ...contains].slice(0, limit);
}
