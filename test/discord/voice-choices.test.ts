import { describe, expect, it } from 'vitest';
import narrate from '../../commands/narrate/narrate.ts';
import { previewSample } from '../../src/usecases/previews.ts';
import { standardVoiceChoices, voiceLabel } from '../../src/discord/interactions/voice-choices.ts';
import { ADVANCED_VOICES } from '../../src/tts/validation.ts';
import { advancedVoiceFacts, KNOWN_STANDARD_VOICES, standardVoiceFacts } from '../../src/tts/voices.ts';

// What a voice option shows: a voice's language where its id encodes it, its gender where the
// service's facts (the advanced voices) or the engines' voice lists (the known standard ids) say
// it, never a guess; and the sample a preview reads.

describe('voice facts', () => {
  it.each([
    ['ja-JP-Wavenet-B', 'ja-JP', 'female'],
    ['ja-JP-Wavenet-C', 'ja-JP', 'male'],
    ['ja-JP-KeitaNeural', 'ja-JP', 'male'],
    ['ja-JP-NanamiNeural_cs', 'ja-JP', 'unknown'],
    ['cmn-CN-Wavenet-A', 'cmn-CN', 'female'],
    ['Joanna', 'en', 'female'],
    ['Matthew', 'en', 'male'],
    ['ja-JP-Wavenet-Z', 'ja-JP', 'unknown'],
    ['some-new-voice', null, 'unknown'],
  ])('GIVEN the standard id %s THEN its language is %s and its gender %s', (voice, language, gender) => {
    expect(standardVoiceFacts(voice)).toEqual({ language, gender });
  });

  it("GIVEN the known standard voices THEN all but the service's own variant have a gender", () => {
    const unknown = KNOWN_STANDARD_VOICES.filter((v) => standardVoiceFacts(v).gender === 'unknown');
    expect(unknown).toEqual(['ja-JP-NanamiNeural_cs']);
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
      { name: 'es-ES-Standard-A · European Spanish · female', value: 'es-ES-Standard-A' },
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
