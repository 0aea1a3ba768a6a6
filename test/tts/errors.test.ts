import { describe, expect, it } from 'vitest';
import { CodedError } from '@yomiage/coded-error';
import {
  EXIT_CODES,
  TTS_ERROR_CODES,
  TtsAbortError,
  TtsAllowanceError,
  TtsDownloadError,
  TtsError,
  TtsInputError,
  TtsJobFailedError,
  TtsJobStuckError,
  TtsNetworkError,
  TtsServiceError,
  TtsUsageError,
  advancedCodeFor,
  exitCodeFor,
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
      const e = new TtsError(code, { status: 400 });
      expect(e.code).toBe(code);
      expect(e.message.length).toBeGreaterThan(0);
      if (code !== 'unknown') expect(e.kind).toBe(kind);
      expect(e.retryable).toBe(retryable);
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
    expect(new TtsError('unknown', { status: 418 }).kind).toBe('refused');
    expect(new TtsError('unknown', { status: 502 }).kind).toBe('unavailable');
    expect(new TtsError('unknown', {}).kind).toBe('unavailable');
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

describe('one error convention: (code, options) or (options), name as a field, cause in the bag', () => {
  const cause = new TtsNetworkError('timeout', { endpoint: 'poll', attempts: 3 });
  const rows: [TtsError, string, TtsErrorCode][] = [
    [new TtsError('bad_response', { status: 200, cause }), 'TtsError', 'bad_response'],
    [new TtsServiceError('rate_limited', { status: 429, retryAfterMs: 5000, cause }), 'TtsServiceError', 'rate_limited'],
    [new TtsJobFailedError('job_timeout', { status: 200, jobId: 'j', cause }), 'TtsJobFailedError', 'job_timeout'],
    [
      new TtsInputError({ issues: [{ field: 'speed', code: 'invalid_speed', message: 'too fast' }], cause }),
      'TtsInputError',
      'invalid_input',
    ],
    [new TtsAllowanceError({ status: 200, cause }), 'TtsAllowanceError', 'allowance_exhausted'],
    [new TtsDownloadError('download_failed', { status: 503, cause }), 'TtsDownloadError', 'download_failed'],
    [new TtsNetworkError('network', { attempts: 3, cause }), 'TtsNetworkError', 'network'],
    [new TtsAbortError({ endpoint: 'standard', cause }), 'TtsAbortError', 'aborted'],
    [new TtsJobStuckError({ jobId: 'j', cause }), 'TtsJobStuckError', 'job_stuck'],
    [new TtsUsageError({ message: 'TEXT is required', cause }), 'TtsUsageError', 'invalid_input'],
  ];
  for (const [error, name, code] of rows) {
    it(`${name} (${code})`, () => {
      expect(error).toBeInstanceOf(TtsError);
      expect(error).toBeInstanceOf(CodedError);
      expect(error.name).toBe(name);
      expect(error.code).toBe(code);
      expect(error.cause).toBe(cause);
      // The cause is not part of the context (it is not copied into logs as a field).
      expect(Object.keys(error.context)).not.toContain('cause');
      expect(String(error)).toBe(`${name}: ${error.message}`);
    });
  }

  it('the default message comes from the code table; options.message replaces it', () => {
    expect(new TtsServiceError('quota_exceeded').message).toBe(TTS_ERROR_CODES.quota_exceeded.message);
    expect(new TtsServiceError('unknown', { message: 'The service answered with an unknown code: x' }).message).toBe(
      'The service answered with an unknown code: x',
    );
    expect(new TtsInputError({ issues: [{ field: 'speed', code: 'invalid_speed', message: 'too fast' }] }).message).toBe(
      'Invalid speed: too fast',
    );
    expect(new TtsDownloadError('download_refused').context.endpoint).toBe('download');
  });
});
