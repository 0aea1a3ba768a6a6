import { describe, expect, it } from 'vitest';
import { SpeechError, type SpeechErrorCode } from '../../src/speech/errors.ts';

// One row per code: [code, the class a caller sees for it]. The budget's refusals: test/billing/errors.test.ts.
const TABLE: [SpeechErrorCode, string][] = [
  ['aborted', 'SpeechError'],
  ['closed', 'SpeechError'],
  ['synthesis_failed', 'SpeechError'],
];

describe('speech errors', () => {
  it('the table covers every code, each with its own default message', () => {
    expect(TABLE.map(([code]) => code).sort()).toEqual(Object.keys(SpeechError.messages).sort());
    expect(new Set(Object.values(SpeechError.messages)).size).toBe(TABLE.length);
  });

  it.each(TABLE)('GIVEN code %s THEN a SpeechError with that code, its default message, the guild and the cause', (code) => {
    const cause = new Error('underneath');
    const error = new SpeechError(code, { guildId: 'g1', cause });
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ name: 'SpeechError', code, guildId: 'g1', message: SpeechError.messages[code] });
    expect(error.cause).toBe(cause);
    expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
  });
});
