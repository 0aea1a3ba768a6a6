import { describe, expect, it } from 'vitest';
import { RateLimiterError, type RateLimiterErrorCode } from '../../src/tts/errors.ts';

const CODES: RateLimiterErrorCode[] = ['limiter_store_failed', 'limiter_bad_argument'];

describe('rate limiter errors', () => {
  it('the table covers every code, each with its own default message', () => {
    expect([...CODES].sort()).toEqual(Object.keys(RateLimiterError.messages).sort());
    expect(new Set(Object.values(RateLimiterError.messages)).size).toBe(CODES.length);
  });

  it.each(CODES)('GIVEN code %s THEN the error names its kind, keeps its cause and has the default message', (code) => {
    const cause = new Error('underneath');
    const error = new RateLimiterError(code, { kind: 'advanced', cause });
    expect(error).toMatchObject({ name: 'RateLimiterError', code, kind: 'advanced', message: RateLimiterError.messages[code] });
    expect(error.cause).toBe(cause);
    expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
  });
});
