import { describe, expect, it } from 'vitest';
import {
  EXIT_CODES,
  TTS_ERROR_CODES,
  TtsError,
  advancedCodeFor,
  errorKind,
  exitCodeFor,
  isRetryable,
  standardCodeFor,
  type TtsErrorCode,
  type TtsErrorKind,
} from '../../src/tts/errors.ts';

// One row per code: the spec's codes (standard messages mapped to names, advanced creation,
// polling and job failure codes) plus the client's own. [code, kind, retryable]
const TABLE: [TtsErrorCode, TtsErrorKind, boolean][] = [
  ['token_missing', 'refused', false],
  ['token_mismatch', 'refused', false],
  ['voice_required', 'refused', false],
  ['unsupported_voice', 'refused', false],
  ['missing_fields', 'refused', false],
  ['non_finite', 'refused', false],
  ['rate_limited', 'limited', true],
  ['internal_error', 'unavailable', true],
  ['invalid_token', 'refused', false],
  ['invalid_json', 'refused', false],
  ['validation_error', 'refused', false],
  ['invalid_speed', 'refused', false],
  ['invalid_pitch', 'refused', false],
  ['invalid_temperature', 'refused', false],
  ['invalid_seed', 'refused', false],
  ['invalid_model', 'refused', false],
  ['client_ip_unresolved', 'refused', false],
  ['text_too_long', 'refused', false],
  ['invalid_voice', 'refused', false],
  ['content_policy_violation', 'refused', false],
  ['invalid_request', 'refused', false],
  ['forbidden', 'refused', false],
  ['not_found', 'refused', false],
  ['method_not_allowed', 'refused', false],
  ['quota_exceeded', 'limited', false],
  ['service_not_configured', 'unavailable', false],
  ['unsupported_location', 'unavailable', false],
  ['tts_retry_exhausted', 'unavailable', true],
  ['job_timeout', 'unavailable', true],
  ['enqueue_failed', 'unavailable', true],
  ['user_unavailable', 'refused', false],
  ['invalid_input', 'input', false],
  ['allowance_exhausted', 'limited', false],
  ['download_refused', 'unavailable', false],
  ['download_failed', 'unavailable', true],
  ['bad_response', 'unavailable', false],
  ['redirect_refused', 'refused', false],
  ['network', 'unavailable', true],
  ['timeout', 'unavailable', true],
  ['aborted', 'aborted', false],
  ['job_stuck', 'unavailable', true],
  ['unknown', 'unavailable', false],
];

describe('error codes', () => {
  it('the table covers every code exactly once', () => {
    expect(TABLE.map((r) => r[0]).sort()).toEqual(Object.keys(TTS_ERROR_CODES).sort());
  });

  for (const [code, kind, retryable] of TABLE) {
    it(`${code}: kind ${kind}, retryable ${retryable}, exit ${EXIT_CODES[kind]}`, () => {
      const e = new TtsError(code, undefined, { status: 400 });
      expect(e.code).toBe(code);
      expect(e.message.length).toBeGreaterThan(0);
      if (code !== 'unknown') expect(errorKind(e)).toBe(kind);
      expect(isRetryable(e)).toBe(retryable);
      expect(e).toBeInstanceOf(Error);
      expect(JSON.parse(JSON.stringify(e))).toMatchObject({ code, status: 400 });
    });
  }

  it('the CLI exit codes are 2 input, 3 refused, 4 limited, 5 unavailable', () => {
    expect(exitCodeFor(new TtsError('invalid_input'))).toBe(2);
    expect(exitCodeFor(new TtsError('token_mismatch'))).toBe(3);
    expect(exitCodeFor(new TtsError('allowance_exhausted'))).toBe(4);
    expect(exitCodeFor(new TtsError('quota_exceeded'))).toBe(4);
    expect(exitCodeFor(new TtsError('network'))).toBe(5);
    expect(exitCodeFor(new Error('boom'))).toBe(5);
  });

  it('an unknown code is judged by the HTTP status it came with', () => {
    expect(new TtsError('unknown', undefined, { status: 418 }).kind).toBe('refused');
    expect(new TtsError('unknown', undefined, { status: 502 }).kind).toBe('unavailable');
    expect(new TtsError('unknown', undefined, {}).kind).toBe('unavailable');
  });

  it('standard messages map to codes (spec: Errors / Standard endpoint)', () => {
    expect(standardCodeFor(400, 'Token does not exists')).toBe('token_missing');
    expect(standardCodeFor(400, 'Token does not match')).toBe('token_mismatch');
    expect(standardCodeFor(400, 'voice parameter is required')).toBe('voice_required');
    expect(standardCodeFor(400, 'Unsupported voice requested.')).toBe('unsupported_voice');
    expect(standardCodeFor(400, 'Please set "voice", "speed", "pitch", "text"')).toBe('missing_fields');
    expect(standardCodeFor(400, '"speed" and "pitch" must be finite numbers')).toBe('non_finite');
    expect(standardCodeFor(429, 'Rate limit exceeded')).toBe('rate_limited');
    expect(standardCodeFor(500, 'Internal server error')).toBe('internal_error');
    expect(standardCodeFor(400, 'Something new')).toBe('unknown');
  });

  it('advanced codes pass through; unknown and client-only strings become unknown', () => {
    expect(advancedCodeFor('invalid_seed', 400)).toBe('invalid_seed');
    expect(advancedCodeFor('whatever', 400)).toBe('unknown');
    expect(advancedCodeFor('timeout', 400)).toBe('unknown');
    expect(advancedCodeFor(undefined, 403)).toBe('forbidden');
    expect(advancedCodeFor(undefined, 405)).toBe('method_not_allowed');
    expect(advancedCodeFor(undefined, 503)).toBe('internal_error');
  });
});
