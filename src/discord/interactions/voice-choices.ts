import type { APIApplicationCommandOptionChoice } from 'discord.js';
import { KNOWN_STANDARD_VOICES, standardVoiceFacts, type VoiceFacts } from '../../tts/voices.ts';
import { t, type Lang } from '../../i18n/texts.ts';

// Discord's limits on an autocomplete answer: at most 25 choices, each name 1 to 100 characters.
const MAX_CHOICES = 25;
const MAX_NAME = 100;

/** "日本語 (日本)" / "Japanese (Japan)" for a BCP 47 tag, in the member's language. */
function languageName(lang: Lang, tag: string | null): string {
  if (tag === null) return t(lang, 'voice.language_unknown');
  try {
    return new Intl.DisplayNames([lang], { type: 'language' }).of(tag) ?? tag;
  } catch {
    return tag;
  }
}

/** A voice as a member reads it in a list: "ja-JP-Wavenet-B · 日本語 (日本) · 性別不明" (at most 100 characters). */
export function voiceLabel(lang: Lang, voice: string, facts: VoiceFacts): string {
  const parts = [voice, ...(facts.language === null ? [] : [languageName(lang, facts.language)]), t(lang, `voice.gender_${facts.gender}`)];
  const label = parts.join(' · ');
  return label.length <= MAX_NAME ? label : `${label.slice(0, MAX_NAME - 1)}…`;
}

/**
 * The autocomplete answer of every standard voice option (/voice set, /voice preview, /config voice,
 * /say voice): known voices with their language and gender, those whose id starts with what the member
 * typed first, then those whose id or label contains it; at most 25.
 */
export function standardVoiceChoices(typed: string, lang: Lang): APIApplicationCommandOptionChoice<string>[] {
  const q = typed.trim().toLowerCase();
  const all = KNOWN_STANDARD_VOICES.map((value) => ({ name: voiceLabel(lang, value, standardVoiceFacts(value)), value }));
  const starts = all.filter((c) => c.value.toLowerCase().startsWith(q));
  const contains = all.filter((c) => !c.value.toLowerCase().startsWith(q) && c.name.toLowerCase().includes(q));
  return [...starts, ...contains].slice(0, MAX_CHOICES);
}
