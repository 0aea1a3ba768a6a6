/**
 * Unicode emoji read by their names (a per-server switch; off, they are dropped as
 * before). Names come from emojibase-data (CLDR annotations, maintained upstream, Japanese and
 * English), not from a list of our own. A run of the same emoji ("🎉🎉🎉") is read once.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ReadLang } from './words.ts';

interface CompactEmoji {
  unicode: string;
  label: string;
  skins?: CompactEmoji[];
}

// One emoji (RGI: flags, keycaps, ZWJ sequences, skin tones; or a pictograph typed without its
// variation selector, as "❤" often is), then more of the same one, spaces between or not: read once.
const EMOJI_RUN = /(\p{RGI_Emoji}|\p{Extended_Pictographic})(?:\s*\1)*/gv;
// Skin tones and variation selectors do not change what an emoji is called aloud.
// eslint-disable-next-line no-misleading-character-class -- single code points, each matched alone
const NOT_NAMED = /[\u{1F3FB}-\u{1F3FF}\uFE0E\uFE0F]/gu;

const require = createRequire(import.meta.url);
const tables = new Map<ReadLang, ReadonlyMap<string, string>>();

/** emoji (without skin tone or variation selector) -> spoken name, loaded once per language on first use. */
function namesFor(lang: ReadLang): ReadonlyMap<string, string> {
  const cached = tables.get(lang);
  if (cached) return cached;
  const file = require.resolve(`emojibase-data/${lang}/compact.json`);
  const data = JSON.parse(readFileSync(file, 'utf8')) as CompactEmoji[];
  const names = new Map<string, string>();
  for (const e of data) {
    // "flag: Japan", "旗: 日本": the colon is for the eye; a space reads better.
    const label = e.label.replace(/\s*[:：]\s*/g, ' ').trim();
    if (label) names.set(e.unicode.replace(NOT_NAMED, ''), label);
  }
  tables.set(lang, names);
  return names;
}

/**
 * Loads both languages' names now (about 15 ms), so the first message with emoji does not parse
 * the dataset on the thread that sends voice packets every 20 ms. The bot calls it at start.
 */
export function loadEmojiNames(): void {
  namesFor('ja');
  namesFor('en');
}

/** The spoken name of one emoji in `lang`, or undefined when the dataset has none. */
export function emojiName(emoji: string, lang: ReadLang): string | undefined {
  return namesFor(lang).get(emoji.replace(NOT_NAMED, ''));
}

/**
 * Replaces every emoji in `text` by its name ("🍣" -> "すし" / "sushi"), a run of the same emoji
 * by one name. Emoji without a name are left for the caller's emoji filter to drop.
 */
export function readEmoji(text: string, lang: ReadLang): string {
  const pad = lang === 'en' ? ' ' : ''; // English words need spaces around them; Japanese does not
  return text.replace(EMOJI_RUN, (run: string, one: string) => {
    const name = emojiName(one, lang);
    return name === undefined ? run : `${pad}${name}${pad}`;
  });
}
