import { describe, expect, it } from 'vitest';
import narrate from '../../commands/narrate/narrate.ts';
import { previewSample } from '../../commands/voice/voice-preview.ts';
import { standardVoiceChoices, voiceLabel } from '../../src/discord/interactions/voice-choices.ts';
import { ADVANCED_VOICES } from '../../src/tts/validation.ts';
import { advancedVoiceFacts, standardVoiceFacts } from '../../src/tts/voices.ts';

// What a voice option shows: a voice's language where its id encodes it, its gender where the
// service's facts say it (the advanced voices), never a guess; and the sample a preview reads.

describe('voice facts', () => {
  it.each([
    ['ja-JP-Wavenet-B', 'ja-JP'],
    ['ja-JP-NanamiNeural_cs', 'ja-JP'],
    ['cmn-CN-Wavenet-A', 'cmn-CN'],
    ['Joanna', 'en'],
    ['some-new-voice', null],
  ])('GIVEN the standard id %s THEN its language is %s and its gender unknown', (voice, language) => {
    expect(standardVoiceFacts(voice)).toEqual({ language, gender: 'unknown' });
  });

  it('GIVEN the 25 advanced voices THEN twelve are female and thirteen male', () => {
    const genders = ADVANCED_VOICES.map((v) => advancedVoiceFacts(v).gender);
    expect(genders.filter((g) => g === 'female')).toHaveLength(12);
    expect(genders.filter((g) => g === 'male')).toHaveLength(13);
  });

  it('GIVEN /narrate THEN each voice choice is named with its gender in both languages, its value the voice', () => {
    const voice = narrate.data.options.find((o) => o.name === 'voice')!;
    const choices = 'choices' in voice ? voice.choices : [];
    expect(choices[0]).toEqual({
      name: 'Anna · female',
      name_localizations: { ja: 'Anna · 女性', 'en-US': 'Anna · female' },
      value: 'Anna',
    });
    expect(choices.at(-1)!.name).toBe('Yann · male');
  });
});

describe('voice choices', () => {
  it('GIVEN nothing typed THEN 25 choices at most, each name within 100 characters', () => {
    const choices = standardVoiceChoices('', 'ja');
    expect(choices).toHaveLength(25);
    for (const c of choices) expect(c.name.length).toBeLessThanOrEqual(100);
  });

  it('GIVEN a language name typed THEN the voices of that language', () => {
    expect(standardVoiceChoices('spanish', 'en')).toEqual([
      { name: 'es-ES-Standard-A · European Spanish · gender unknown', value: 'es-ES-Standard-A' },
    ]);
  });

  it('GIVEN a very long id THEN the label is cut to 100 characters', () => {
    expect(voiceLabel('en', 'x'.repeat(120), { language: null, gender: 'unknown' })).toHaveLength(100);
  });
});

describe('preview samples', () => {
  it.each([
    ['ja-JP-Wavenet-B', 'en', 'こんにちは、この声で読み上げます。'],
    ['en-US-Wavenet-A', 'ja', 'Hello, this is how I will read your messages.'],
    ['Joanna', 'ja', 'Hello, this is how I will read your messages.'],
    ['cmn-CN-Wavenet-A', 'ja', '你好，我会用这个声音朗读你的消息。'],
    ['some-new-voice', 'ja', 'こんにちは、この声で読み上げます。'],
  ] as const)('GIVEN the voice %s and a member reading %s THEN the sample is %s', (voice, lang, text) => {
    expect(previewSample(voice, lang).text).toBe(text);
  });
});
