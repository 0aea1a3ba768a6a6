import { describe, expect, it } from 'vitest';
import { countChars, truncateChars } from '../../src/tts/chars.ts';
import {
  ADVANCED_VOICES,
  isOnlyEmoji,
  standardEffective,
  validateAdvanced,
  validateStandard,
  validateToken,
} from '../../src/tts/validation.ts';

const TEN = 'こんにちは、元気です'; // 10 characters

function codesOf(r: ReturnType<typeof validateAdvanced> | ReturnType<typeof validateStandard>): string[] {
  return r.ok ? [] : r.issues.map((i) => `${i.field}:${i.code}`);
}

describe('countChars', () => {
  it('GIVEN text with astral emoji THEN counts code points, not UTF-16 units', () => {
    expect(countChars('😀😀')).toBe(2);
    expect('😀😀'.length).toBe(4);
    expect(countChars('')).toBe(0);
    expect(countChars('あいう')).toBe(3);
  });
  it('GIVEN a cut inside a surrogate pair THEN truncateChars keeps whole characters', () => {
    expect(truncateChars('a😀b', 2)).toBe('a😀');
  });
});

describe('validateAdvanced', () => {
  it('GIVEN the 25 voices THEN the list matches the spec', () => {
    expect(ADVANCED_VOICES).toHaveLength(25);
    expect(ADVANCED_VOICES).toContain('Ruby');
    expect(ADVANCED_VOICES).toContain('Yann');
  });

  it('GIVEN a full valid request THEN it passes unchanged', () => {
    const req = {
      text: TEN,
      voice: 'Ruby',
      tone: 'calm',
      speed: 1.5,
      pitch: -1,
      model: 'pro',
      seed: -2147483648,
      temperature: 0.7,
    } as const;
    expect(validateAdvanced(req, 'free')).toEqual({ ok: true, value: req });
  });

  it('GIVEN only text THEN no undefined keys are added', () => {
    const r = validateAdvanced({ text: TEN, voice: undefined }, 'free');
    expect(r.ok && Object.keys(r.value)).toEqual(['text']);
  });

  const cases: [string, Record<string, unknown>, 'free' | 'paid', string][] = [
    ['9 characters', { text: 'あいうえおかきくけ' }, 'free', 'text:validation_error'],
    ['9 characters padded with blanks to 12', { text: ' あいうえおかきくけ\u3000 ' }, 'free', 'text:validation_error'],
    ['10 spaces', { text: ' '.repeat(10) }, 'free', 'text:validation_error'],
    ['9 astral characters (18 UTF-16 units)', { text: '𠀋'.repeat(9) }, 'free', 'text:validation_error'],
    ['401 characters on free', { text: 'あい'.repeat(200) + 'う' }, 'free', 'text:text_too_long'],
    ['3001 characters on paid', { text: 'あい'.repeat(1500) + 'う' }, 'paid', 'text:text_too_long'],
    ['only emoji', { text: '😀🎉👍🏽❤️🇯🇵😀🎉👍🏽❤️🇯🇵' }, 'free', 'text:validation_error'],
    ['only emoji with spaces and ZWJ', { text: '👨‍👩‍👧 👨‍👩‍👧 👨‍👩‍👧 👨‍👩‍👧' }, 'free', 'text:validation_error'],
    ['a character 20 times in a row', { text: 'わ'.repeat(20) }, 'free', 'text:validation_error'],
    ['text not a string', { text: 42 }, 'free', 'text:validation_error'],
    ['text missing', {}, 'free', 'text:validation_error'],
    ['tone of 101 characters', { text: TEN, tone: 'a'.repeat(101) }, 'free', 'tone:invalid_request'],
    ['speed 0.49', { text: TEN, speed: 0.49 }, 'free', 'speed:invalid_speed'],
    ['speed 1.51', { text: TEN, speed: 1.51 }, 'free', 'speed:invalid_speed'],
    ['speed as a string', { text: TEN, speed: '1' }, 'free', 'speed:invalid_speed'],
    ['speed NaN', { text: TEN, speed: Number.NaN }, 'free', 'speed:invalid_speed'],
    ['pitch -1.01', { text: TEN, pitch: -1.01 }, 'free', 'pitch:invalid_pitch'],
    ['pitch 1.01', { text: TEN, pitch: 1.01 }, 'free', 'pitch:invalid_pitch'],
    ['seed 1.5', { text: TEN, seed: 1.5 }, 'free', 'seed:invalid_seed'],
    ['seed 2^31', { text: TEN, seed: 2 ** 31 }, 'free', 'seed:invalid_seed'],
    ['seed -2^31-1', { text: TEN, seed: -(2 ** 31) - 1 }, 'free', 'seed:invalid_seed'],
    ['temperature 0.6', { text: TEN, temperature: 0.6 }, 'free', 'temperature:invalid_temperature'],
    ['temperature "1"', { text: TEN, temperature: '1' }, 'free', 'temperature:invalid_temperature'],
    ['model "ultra"', { text: TEN, model: 'ultra' }, 'free', 'model:invalid_model'],
    ['voice "Bob"', { text: TEN, voice: 'Bob' }, 'free', 'voice:invalid_voice'],
    ['voice "ruby" (case matters)', { text: TEN, voice: 'ruby' }, 'free', 'voice:invalid_voice'],
  ];
  for (const [name, req, plan, code] of cases) {
    it(`GIVEN ${name} THEN refused with ${code}`, () => {
      expect(codesOf(validateAdvanced(req, plan))).toContain(code);
    });
  }

  it('GIVEN several bad fields THEN every field is reported', () => {
    expect(codesOf(validateAdvanced({ text: 'short', speed: 9, model: 'x' }, 'free'))).toEqual(
      expect.arrayContaining(['text:validation_error', 'speed:invalid_speed', 'model:invalid_model']),
    );
  });

  const accepted: [string, Record<string, unknown>, 'free' | 'paid'][] = [
    ['exactly 10 characters', { text: TEN }, 'free'],
    ['exactly 400 on free', { text: 'あい'.repeat(200) }, 'free'],
    ['401 on paid', { text: 'あい'.repeat(200) + 'う' }, 'paid'],
    ['a character 19 times', { text: 'わ'.repeat(19) }, 'free'],
    ['emoji mixed with words', { text: 'おはよう😀ございます' }, 'free'],
    ['digits only', { text: '0123456789' }, 'free'],
    ['tone of 100', { text: TEN, tone: 'a'.repeat(100) }, 'free'],
    ['bounds 0.5 / 1 / int32 max / temperature 0', { text: TEN, speed: 0.5, pitch: 1, seed: 2147483647, temperature: 0 }, 'free'],
  ];
  for (const [name, req, plan] of accepted) {
    it(`GIVEN ${name} THEN accepted`, () => {
      expect(validateAdvanced(req, plan).ok).toBe(true);
    });
  }

  it('GIVEN a non-object THEN refused, not thrown', () => {
    expect(validateAdvanced(null, 'free').ok).toBe(false);
  });
});

describe('isOnlyEmoji', () => {
  it('GIVEN keycaps THEN they count as emoji', () => expect(isOnlyEmoji('1️⃣2️⃣')).toBe(true));
  it('GIVEN whitespace only THEN it is not emoji', () => expect(isOnlyEmoji('   ')).toBe(false));
  it('GIVEN a letter among emoji THEN it is not only emoji', () => expect(isOnlyEmoji('😀a😀')).toBe(false));
});

describe('validateStandard', () => {
  const ok = { voice: 'ja-JP-Wavenet-B', text: 'こんにちは', speed: 1, pitch: 0 };
  it('GIVEN a valid request THEN it passes', () => expect(validateStandard(ok)).toEqual({ ok: true, value: ok }));
  it('GIVEN out-of-range speed/pitch THEN still valid (the service substitutes defaults)', () => {
    expect(validateStandard({ ...ok, speed: 9, pitch: -50 }).ok).toBe(true);
    expect(standardEffective('speed', 9)).toBe(1);
    expect(standardEffective('speed', 0.3)).toBe(0.3);
    expect(standardEffective('pitch', -50)).toBe(0);
    expect(standardEffective('pitch', 20)).toBe(20);
  });
  const cases: [string, Record<string, unknown>, string][] = [
    ['voice missing', { ...ok, voice: undefined }, 'voice:voice_required'],
    ['voice a number', { ...ok, voice: 5 }, 'voice:voice_required'],
    ['voice empty', { ...ok, voice: '' }, 'voice:voice_required'],
    ['speed a string', { ...ok, speed: '1' }, 'speed:non_finite'],
    ['pitch null', { ...ok, pitch: null }, 'pitch:missing_fields'],
    ['text empty', { ...ok, text: '' }, 'text:missing_fields'],
    ['text missing', { ...ok, text: undefined }, 'text:missing_fields'],
    ['speed missing', { ...ok, speed: undefined }, 'speed:missing_fields'],
    ['pitch missing', { ...ok, pitch: undefined }, 'pitch:missing_fields'],
    ['speed NaN', { ...ok, speed: Number.NaN }, 'speed:non_finite'],
    ['pitch Infinity', { ...ok, pitch: Number.POSITIVE_INFINITY }, 'pitch:non_finite'],
  ];
  for (const [name, req, code] of cases) {
    it(`GIVEN ${name} THEN refused with ${code}`, () => expect(codesOf(validateStandard(req))).toContain(code));
  }
});

describe('validateToken', () => {
  it('GIVEN 64 characters THEN accepted', () => expect(validateToken('a'.repeat(64)).ok).toBe(true));
  it('GIVEN 63 or 65 characters, or none THEN refused without echoing it', () => {
    for (const t of ['s'.repeat(63), 's'.repeat(65), undefined, '', `${'s'.repeat(63)}\n`]) {
      const r = validateToken(t);
      expect(r.ok).toBe(false);
      expect(JSON.stringify(r)).not.toContain('sss');
    }
  });
});
