import { describe, expect, it } from 'vitest';
import { emojiName, readEmoji } from '../../src/speech/text/emoji.ts';
import { normaliseMessage, type PlainMessage } from '../../src/speech/text/text.ts';
import { type ReadLang } from '../../src/speech/text/words.ts';

// Unicode emoji read by their names from emojibase-data (CLDR annotations), per language.
function msg(content: string): PlainMessage {
  return { content, authorId: '1', authorName: 'a', users: {}, roles: {}, channels: {}, attachments: [], stickers: [] };
}
const read = (content: string, lang: ReadLang, readEmoji: boolean, dictionary: { word: string; reading: string }[] = []) =>
  normaliseMessage(msg(content), { lang, maxLength: 200, readEmoji, dictionary });

describe('GIVEN the emoji switch off (the default)', () => {
  it('THEN emoji are dropped as before', () => {
    expect(read('今日は寿司🍣🍣', 'ja', false)).toBe('今日は寿司');
    expect(read('🎉🎉', 'ja', false)).toBeNull();
  });
});

describe('GIVEN the emoji switch on', () => {
  it('THEN an emoji is read by its Japanese name, or its English name', () => {
    expect(read('今日は🍣', 'ja', true)).toBe('今日はすし');
    expect(read('sushi time 🍣', 'en', true)).toBe('sushi time sushi');
  });

  it('THEN a run of the same emoji is read once, spaces between or not', () => {
    expect(read('🎉🎉🎉🎉🎉', 'ja', true)).toBe(emojiName('🎉', 'ja'));
    expect(read('🎉 🎉 🎉', 'en', true)).toBe('party popper');
  });

  it('THEN different emoji side by side are each read', () => {
    expect(read('🍣🎉', 'en', true)).toBe('sushi party popper');
  });

  it('THEN skin tones, flags, keycaps and ZWJ sequences get one name each', () => {
    expect(read('👍🏽', 'en', true)).toBe('thumbs up'); // the skin tone is not read
    expect(read('🇯🇵', 'ja', true)).toBe('旗 日本');
    expect(read('1️⃣', 'en', true)).toBe('keycap 1');
    expect(read('👨‍👩‍👧', 'en', true)).toBe('family man, woman, girl');
    expect(read('❤', 'ja', true)).toBe('赤いハート'); // text presentation, no FE0F
  });

  it('THEN the server dictionary still wins over the dataset name', () => {
    expect(read('🍣たべたい', 'ja', true, [{ word: '🍣', reading: 'おすし' }])).toBe('おすしたべたい');
  });

  it('THEN text without emoji is unchanged', () => {
    expect(readEmoji('こんにちは ♪', 'ja')).toBe('こんにちは ♪');
  });
});
