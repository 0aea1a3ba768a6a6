// Every audio error code from one table: stable snake_case code, default message, detail, cause.
import { describe, expect, it } from 'vitest';
import { CodedError } from '@yomiage/coded-error';
import { AudioError, type AudioErrorCode } from '../../src/audio/errors.ts';

const TABLE: [AudioErrorCode, RegExp][] = [
  ['transcode_failed', /could not convert the MP3 to Ogg Opus/],
  ['transcode_timeout', /took too long/],
  ['transcode_aborted', /aborted/],
  ['decode_failed', /could not be decoded for playback/],
  ['cache_bad_key', /64 lowercase hex characters/],
  ['cache_write_failed', /could not write its files/],
];

describe('audio error codes', () => {
  it('the table covers every code exactly once', () => {
    expect(TABLE.map((r) => r[0]).sort()).toEqual(Object.keys(AudioError.messages).sort());
  });

  for (const [code, message] of TABLE) {
    it(`${code}: its own message, a detail after it, the cause kept`, () => {
      const plain = new AudioError(code);
      expect(plain).toBeInstanceOf(CodedError);
      expect(plain.name).toBe('AudioError');
      expect(plain.code).toBe(code);
      expect(plain.message).toMatch(message);
      const cause = Object.assign(new Error('open ENOENT'), { code: 'ENOENT' });
      const detailed = new AudioError(code, { detail: 'ENOENT', cause });
      expect(detailed.message).toBe(`${plain.message}: ENOENT`);
      expect(detailed.cause).toBe(cause);
    });
  }
});
