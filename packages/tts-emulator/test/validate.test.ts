import { describe, expect, it } from 'vitest';
import { STANDARD_ERRORS } from '../src/messages.ts';
import {
  codePointLength,
  hasRepeatedRun,
  isEmojiOnly,
  parseFloatLike,
  parseJsonBody,
  validateAdvanced,
  validateStandard,
} from '../src/validate.ts';

const voices = new Set(['ja-JP-Wavenet-B']);
/** n code points of Japanese text without long runs. */
const kana = (n: number) => 'あいうえお'.repeat(Math.ceil(n / 5)).slice(0, n);
const ok = { voice: 'ja-JP-Wavenet-B', text: 'やあ', speed: 1, pitch: 0 };

describe('validateStandard', () => {
  it.each([
    ['no voice', { text: 'a', speed: 1, pitch: 0 }, STANDARD_ERRORS.voiceRequired],
    ['voice not a string', { ...ok, voice: 7 }, STANDARD_ERRORS.voiceRequired],
    ['unknown voice', { ...ok, voice: 'xx-XX-Nobody' }, STANDARD_ERRORS.unsupportedVoice],
    ['no text', { voice: ok.voice, speed: 1, pitch: 0 }, STANDARD_ERRORS.missingField],
    ['empty text', { ...ok, text: '' }, STANDARD_ERRORS.missingField],
    ['no speed', { voice: ok.voice, text: 'a', pitch: 0 }, STANDARD_ERRORS.missingField],
    ['no pitch', { voice: ok.voice, text: 'a', speed: 1 }, STANDARD_ERRORS.missingField],
    ['body not an object', [1, 2], STANDARD_ERRORS.voiceRequired],
    ['speed Infinity', { ...ok, speed: Infinity }, STANDARD_ERRORS.notFinite],
    ['pitch NaN', { ...ok, pitch: NaN }, STANDARD_ERRORS.notFinite],
    ['speed "fast"', { ...ok, speed: 'fast' }, STANDARD_ERRORS.notFinite],
    ['speed "inf"', { ...ok, speed: 'inf' }, STANDARD_ERRORS.notFinite],
    ['pitch "nan"', { ...ok, pitch: 'nan' }, STANDARD_ERRORS.notFinite],
    ['pitch "-Infinity"', { ...ok, pitch: '-Infinity' }, STANDARD_ERRORS.notFinite],
    ['speed "1e999" (parses to infinity)', { ...ok, speed: '1e999' }, STANDARD_ERRORS.notFinite],
    ['speed ""', { ...ok, speed: '' }, STANDARD_ERRORS.notFinite],
    ['speed true', { ...ok, speed: true }, STANDARD_ERRORS.notFinite],
    ['pitch an array', { ...ok, pitch: [0] }, STANDARD_ERRORS.notFinite],
  ])('GIVEN %s THEN %s', (_name, body, error) => {
    expect(validateStandard(body, voices)).toEqual({ ok: false, error });
  });

  // The service's official client sends its saved settings as strings (this package's README.md).
  it.each([
    ['"1.2"', '1.2', 1.2],
    ['" 0.5 " (blanks around)', ' 0.5 ', 0.5],
    ['"4"', '4', 4],
    ['"9" (out of range)', '9', 1.0],
  ])('GIVEN speed string %s THEN the effective speed is %s', (_name, speed, effective) => {
    const r = validateStandard({ ...ok, speed, pitch: '0' }, voices);
    expect(r).toEqual({ ok: true, value: { ...ok, speed: effective, pitch: 0 } });
  });

  it.each([
    [0.29, 1.0],
    [0.3, 0.3],
    [4.0, 4.0],
    [4.01, 1.0],
  ])('GIVEN speed %s THEN the effective speed is %s', (speed, effective) => {
    const r = validateStandard({ ...ok, speed }, voices);
    expect(r.ok && r.value.speed).toBe(effective);
  });

  it.each([
    [-21, 0],
    [-20, -20],
    [20, 20],
    [20.5, 0],
  ])('GIVEN pitch %s THEN the effective pitch is %s', (pitch, effective) => {
    const r = validateStandard({ ...ok, pitch }, voices);
    expect(r.ok && r.value.pitch).toBe(effective);
  });
});

describe('parseFloatLike (Python float() on a JSON value)', () => {
  it.each([
    ['1.2', 1.2],
    ['0', 0],
    ['-20', -20],
    ['+2', 2],
    ['.5', 0.5],
    ['5.', 5],
    ['1e0', 1],
    ['2E-1', 0.2],
    ['1_0.5', 10.5],
    ['\t3\n', 3],
  ])('GIVEN the string %j THEN %s', (input, value) => {
    expect(parseFloatLike(input)).toBe(value);
  });

  it.each([
    ['inf', Infinity],
    ['-INF', -Infinity],
    ['Infinity', Infinity],
    ['+infinity', Infinity],
  ])('GIVEN the string %j THEN %s (refused later as not finite)', (input, value) => {
    expect(parseFloatLike(input)).toBe(value);
  });

  it.each(['nan', 'NaN', '-nan'])('GIVEN the string %j THEN NaN (refused later as not finite)', (input) => {
    expect(parseFloatLike(input)).toBeNaN();
  });

  it.each(['', ' ', 'fast', '0x10', '0b1', '1,2', '1.2.3', '1__0', '_1', '1_', 'e5', '1e', 'infinit', 'nan1'])(
    'GIVEN the string %j THEN not a number',
    (input) => {
      expect(parseFloatLike(input)).toBeUndefined();
    },
  );

  it.each([[true], [null], [[1]], [{ v: 1 }]])('GIVEN %j THEN not a number', (input) => {
    expect(parseFloatLike(input)).toBeUndefined();
  });

  it('GIVEN a JSON number THEN it is kept as it is', () => {
    expect(parseFloatLike(1.5)).toBe(1.5);
    expect(parseFloatLike(-0)).toBe(-0);
  });
});

describe('validateAdvanced', () => {
  const text = 'これは十文字以上のテキストです';
  const rules = { plan: 'free' as const, blockList: ['禁止ワード'] };
  it.each([
    ['array body', [text], 'invalid_json'],
    ['no text', {}, 'validation_error'],
    ['9 code points', { text: '123456789' }, 'validation_error'],
    ['10 spaces', { text: ' '.repeat(10) }, 'validation_error'],
    ['only emoji', { text: '😀😀😁😂🤣😃😄😅😆😉' }, 'validation_error'],
    ['a 20-run', { text: `あ${'ー'.repeat(20)}` }, 'validation_error'],
    ['401 chars (free)', { text: kana(401) }, 'text_too_long'],
    ['unknown voice', { text, voice: 'Bob' }, 'invalid_voice'],
    ['voice not a string', { text, voice: 3 }, 'invalid_voice'],
    ['tone of 101 chars', { text, tone: 'x'.repeat(101) }, 'invalid_request'],
    ['speed 0.49', { text, speed: 0.49 }, 'invalid_speed'],
    ['speed 1.51', { text, speed: 1.51 }, 'invalid_speed'],
    ['speed "1"', { text, speed: '1' }, 'invalid_speed'],
    ['speed null', { text, speed: null }, 'invalid_speed'],
    ['pitch -1.01', { text, pitch: -1.01 }, 'invalid_pitch'],
    ['pitch "0"', { text, pitch: '0' }, 'invalid_pitch'],
    ['temperature 0.6', { text, temperature: 0.6 }, 'invalid_temperature'],
    ['temperature "1"', { text, temperature: '1' }, 'invalid_temperature'],
    ['seed 1.5', { text, seed: 1.5 }, 'invalid_seed'],
    ['seed 2^31', { text, seed: 2147483648 }, 'invalid_seed'],
    ['seed below range', { text, seed: -2147483649 }, 'invalid_seed'],
    ['model "ultra"', { text, model: 'ultra' }, 'invalid_model'],
    ['blocked word', { text: `${text}禁止ワード` }, 'content_policy_violation'],
  ])('GIVEN %s THEN %s', (_name, body, code) => {
    const r = validateAdvanced(body, rules);
    expect(r.ok ? 'ok' : r.error.code).toBe(code);
  });

  it.each([
    ['10 code points with emoji', { text: '😀あいうえおかきくけ' }],
    ['19-run', { text: `あ${'ー'.repeat(19)}` }],
    ['400 chars (free)', { text: kana(400) }],
    ['tone of 100 chars', { text, tone: 'x'.repeat(100) }],
    ['edges', { text, speed: 0.5, pitch: 1.0, seed: -2147483648, temperature: 0.7, model: 'pro' }],
    ['other edges', { text, speed: 1.5, pitch: -1.0, seed: 2147483647, temperature: 0, model: 'flash' }],
  ])('GIVEN %s THEN accepted', (_name, body) => {
    expect(validateAdvanced(body, rules).ok).toBe(true);
  });

  it('GIVEN a paid plan THEN 3,000 characters pass and 3,001 do not', () => {
    const paid = { plan: 'paid' as const, blockList: [] };
    expect(validateAdvanced({ text: kana(3000) }, paid).ok).toBe(true);
    const r = validateAdvanced({ text: kana(3001) }, paid);
    expect(r.ok ? 'ok' : r.error.code).toBe('text_too_long');
  });

  it('GIVEN only text THEN the defaults are voice Ruby, speed 1.0, pitch 0.0', () => {
    expect(validateAdvanced({ text }, rules)).toMatchObject({ ok: true, value: { voice: 'Ruby', speed: 1, pitch: 0 } });
  });
});

describe('helpers', () => {
  it('counts code points, not UTF-16 units', () => {
    expect(codePointLength('𠮷野家😀')).toBe(4);
  });
  it('tells emoji-only text apart', () => {
    expect(isEmojiOnly('👍🏽 👨‍👩‍👧 🇯🇵')).toBe(true);
    expect(isEmojiOnly('1234567890')).toBe(false);
    expect(isEmojiOnly('よし👍')).toBe(false);
  });
  it('finds runs of one code point', () => {
    expect(hasRepeatedRun('😀'.repeat(20))).toBe(true);
    expect(hasRepeatedRun('😀'.repeat(19))).toBe(false);
  });
  it('parses the NaN and Infinity literals Python accepts, leaving strings alone', () => {
    const r = parseJsonBody('{"speed": NaN, "pitch": -Infinity, "text": "NaN Infinity"}');
    expect(r.ok).toBe(true);
    const v = (r as { value: { speed: number; pitch: number; text: string } }).value;
    expect(v.speed).toBeNaN();
    expect(v.pitch).toBe(-Infinity);
    expect(v.text).toBe('NaN Infinity');
    expect(parseJsonBody('{"text": ')).toEqual({ ok: false, error: 'invalid_json' });
  });
});
