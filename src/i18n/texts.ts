/**
 * Every user-facing string, in Japanese and English, keyed by a stable identifier.
 * The texts are data, one file per language (locales/*.json); the keys are typed from them, and
 * the two files must hold the same keys (checked here at compile time; placeholders by
 * test/discord/messages.test.ts, which reads the files).
 * Replies use the interaction's locale: `ja` -> Japanese, anything else -> English.
 */
import enTexts from './locales/en.json' with { type: 'json' };
import jaTexts from './locales/ja.json' with { type: 'json' };

export type Lang = 'ja' | 'en';

export type MessageKey = keyof typeof jaTexts;
export type Vars = Record<string, string | number>;

// A key missing from either file is a type error on one of these two lines.
const ja: Readonly<Record<MessageKey, string>> = jaTexts;
const en: Readonly<Record<keyof typeof enTexts, string>> & Readonly<Record<MessageKey, string>> = enTexts;
const TEXTS: Record<Lang, Readonly<Record<MessageKey, string>>> = { ja, en };

/** Maps a Discord locale (e.g. `ja`, `en-US`) to the language we reply in. */
export function langOf(locale: string | null | undefined): Lang {
  return locale?.startsWith('ja') ? 'ja' : 'en';
}

/** The language of a guild's automatic messages (auto-read, notices): its `/config` locale, Japanese by default. */
export function guildLang(locale: string | null | undefined): Lang {
  return locale === 'en' ? 'en' : 'ja';
}

/** The message for `key` in `lang`, with `{name}` placeholders filled from `vars`. */
export function t(lang: Lang, key: MessageKey, vars: Vars = {}): string {
  return TEXTS[lang][key].replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
}

/** A date as users read it, in their language (UTC, date only). */
export function formatDate(lang: Lang, ms: number): string {
  return new Intl.DateTimeFormat(lang === 'ja' ? 'ja-JP' : 'en-US', { dateStyle: 'medium', timeZone: 'UTC' }).format(ms);
}

/** Every text whose key starts with `prefix`, keyed without it (the dashboard page's own texts). */
export function textsUnder(lang: Lang, prefix: string): Record<string, string> {
  return Object.fromEntries(
    Object.entries(TEXTS[lang])
      .filter(([key]) => key.startsWith(prefix))
      .map(([key, text]) => [key.slice(prefix.length), text]),
  );
}
