/**
 * Every error the TTS client throws, in one module. `code` is stable: it is the service's own code
 * where the service has one (spec: Errors), a code named after the standard endpoint's message
 * where it only sends text, or one of the client's own codes. Context carries what is needed to
 * debug (endpoint, HTTP status, attempts, job id) and never a secret: no access token, no job
 * token, no raw request/undici objects (their `cause` chains can hold headers).
 */
import { CodedError, codedError, type CodedErrorOptions } from '@yomiage/coded-error';
import type { ValidationIssue } from './validation.ts';

/** How a failure should be handled by a caller; the CLI maps it to an exit code. */
export type TtsErrorKind = 'input' | 'refused' | 'limited' | 'unavailable' | 'aborted';

interface CodeInfo {
  kind: TtsErrorKind;
  /** Worth trying again later (after a wait), as opposed to a final answer. */
  retryable: boolean;
  message: string;
}

/** The code table: every code the client can throw, with its classification and default message. */
export const TTS_ERROR_CODES = {
  // Standard endpoint (spec: Errors / Standard endpoint); the service sends only a message there.
  token_missing: { kind: 'refused', retryable: false, message: 'The access token is missing or not 64 characters long' },
  token_mismatch: { kind: 'refused', retryable: false, message: 'The access token was not accepted' },
  voice_required: { kind: 'refused', retryable: false, message: 'The voice parameter is required' },
  unsupported_voice: { kind: 'refused', retryable: false, message: 'The service does not support this voice' },
  missing_fields: { kind: 'refused', retryable: false, message: 'A required field (voice, speed, pitch, text) is missing' },
  non_finite: { kind: 'refused', retryable: false, message: 'Speed and pitch must be finite numbers' },
  rate_limited: { kind: 'limited', retryable: true, message: 'The service rate limit was exceeded' },
  internal_error: { kind: 'unavailable', retryable: true, message: 'The service had an internal error' },

  // Advanced job creation (spec: Errors / Advanced job creation).
  invalid_token: { kind: 'refused', retryable: false, message: 'The access token was not accepted' },
  invalid_json: { kind: 'refused', retryable: false, message: 'The request body was not valid JSON' },
  validation_error: { kind: 'refused', retryable: false, message: 'The text was refused (too short, only emoji or a repeated character)' },
  invalid_speed: { kind: 'refused', retryable: false, message: 'Speed is not a number in 0.5..1.5' },
  invalid_pitch: { kind: 'refused', retryable: false, message: 'Pitch is not a number in -1..1' },
  invalid_temperature: { kind: 'refused', retryable: false, message: 'Temperature must be one of 0, 0.5, 0.7, 1.0' },
  invalid_seed: { kind: 'refused', retryable: false, message: 'Seed must be an integer in the int32 range' },
  invalid_model: { kind: 'refused', retryable: false, message: 'Model must be flash or pro' },
  client_ip_unresolved: { kind: 'refused', retryable: false, message: 'The service could not determine the client address' },
  text_too_long: { kind: 'refused', retryable: false, message: 'The text is longer than the plan allows' },
  invalid_voice: { kind: 'refused', retryable: false, message: 'Unknown advanced voice' },
  content_policy_violation: { kind: 'refused', retryable: false, message: 'The text is blocked by the content policy' },
  invalid_request: { kind: 'refused', retryable: false, message: 'The service refused the request as invalid' },
  forbidden: { kind: 'refused', retryable: false, message: 'Access was refused' },
  not_found: { kind: 'refused', retryable: false, message: 'The job does not exist' },
  method_not_allowed: { kind: 'refused', retryable: false, message: 'The service refused the HTTP method' },
  quota_exceeded: { kind: 'limited', retryable: false, message: 'Not enough characters left in the monthly allowance' },
  service_not_configured: { kind: 'unavailable', retryable: false, message: 'The service is misconfigured' },
  unsupported_location: { kind: 'unavailable', retryable: false, message: 'Synthesis is unavailable for the processing location' },
  tts_retry_exhausted: { kind: 'unavailable', retryable: true, message: 'The service is temporarily unable to generate speech' },

  // Job failure codes (spec: Errors / Job failure codes) not listed above.
  job_timeout: { kind: 'unavailable', retryable: true, message: 'Generation took too long and was stopped' },
  enqueue_failed: { kind: 'unavailable', retryable: true, message: 'The job could not be queued' },
  user_unavailable: { kind: 'refused', retryable: false, message: 'The account is no longer available' },

  // The client's own codes.
  invalid_input: { kind: 'input', retryable: false, message: 'The request breaks the service rules; nothing was sent' },
  allowance_exhausted: {
    kind: 'limited',
    retryable: false,
    message: 'The monthly character allowance is exhausted (the service returned notice audio)',
  },
  download_refused: { kind: 'unavailable', retryable: false, message: 'The audio download was refused by the client guard' },
  download_failed: { kind: 'unavailable', retryable: true, message: 'The audio download failed' },
  bad_response: { kind: 'unavailable', retryable: false, message: 'The service answered with an unexpected response' },
  redirect_refused: { kind: 'refused', retryable: false, message: 'The service redirected the request elsewhere; check TTS_BASE_URL' },
  network: { kind: 'unavailable', retryable: true, message: 'The service could not be reached' },
  timeout: { kind: 'unavailable', retryable: true, message: 'The request to the service timed out' },
  aborted: { kind: 'aborted', retryable: false, message: 'The request was cancelled' },
  job_stuck: { kind: 'unavailable', retryable: true, message: 'The job did not finish in time' },
  unknown: { kind: 'unavailable', retryable: false, message: 'The service answered with an unknown error code' },
} as const satisfies Record<string, CodeInfo>;

export type TtsErrorCode = keyof typeof TTS_ERROR_CODES;

/** Job failure codes after which a new job (new seed) usually succeeds (spec: Job failure codes). */
export const TRANSIENT_JOB_CODES: readonly TtsErrorCode[] = ['tts_retry_exhausted', 'job_timeout', 'enqueue_failed', 'internal_error'];

/** Debug context of an error; by construction never holds a token. */
export interface TtsErrorContext {
  endpoint?: 'standard' | 'advanced' | 'poll' | 'download';
  status?: number;
  attempts?: number;
  jobId?: string;
  /** The raw `code` the service sent, kept when it is unknown to us. */
  serviceCode?: string;
  /** The service's `error` text (Japanese on the advanced endpoints). */
  serviceMessage?: string;
  retryAfterMs?: number;
  /** `quota_exceeded`: characters still available. */
  available?: number;
  /** Download errors: the host involved (never the full signed URL). */
  host?: string;
  /** Name and code of the low-level error, copied; the original object is not kept. */
  causeInfo?: { name: string; code?: string; message?: string };
}

/** Is `code` one of ours? */
export function isKnownCode(code: string): code is TtsErrorCode {
  return Object.hasOwn(TTS_ERROR_CODES, code);
}

/** Constructor options of every TTS error (docs/architecture.md, "Errors"): its debug context, a message, a cause. */
interface TtsErrorOptions extends TtsErrorContext {
  /** Replaces the code's default message; service text in it must be scrubbed of secrets first. */
  message?: string;
  /**
   * Only another TtsError: low-level (transport) errors can hold request options, headers
   * included, so only their name and code are copied, into `causeInfo`.
   */
  cause?: TtsError;
}

/** Base class: every error thrown by src/tts is a TtsError. */
export class TtsError extends CodedError<TtsErrorCode> {
  override name = 'TtsError';
  static override readonly messages: Readonly<Record<string, string>> = Object.fromEntries(
    Object.entries(TTS_ERROR_CODES).map(([code, info]) => [code, info.message]),
  );
  readonly context: TtsErrorContext;

  constructor(code: TtsErrorCode, options: TtsErrorOptions = {}) {
    const { message, cause, ...context } = options;
    super(code, { message, cause });
    this.context = context;
  }

  /** How to handle it; an unknown code is judged by the HTTP status it came with. */
  get kind(): TtsErrorKind {
    if (this.code === 'unknown') {
      const s = this.context.status;
      return s !== undefined && s >= 400 && s < 500 ? 'refused' : 'unavailable';
    }
    return TTS_ERROR_CODES[this.code].kind;
  }

  get retryable(): boolean {
    return TTS_ERROR_CODES[this.code].retryable;
  }

  toJSON(): Record<string, unknown> {
    return { name: this.name, code: this.code, message: this.message, ...this.context };
  }
}

/** The request was refused locally by the validators; nothing reached the service. */
export class TtsInputError extends TtsError {
  override name = 'TtsInputError';
  readonly issues: readonly ValidationIssue[];
  constructor(options: TtsErrorOptions & { issues: readonly ValidationIssue[] }) {
    const { issues, ...rest } = options;
    const first = issues[0];
    super('invalid_input', { ...(first ? { message: `Invalid ${first.field}: ${first.message}` } : {}), ...rest });
    this.issues = issues;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), issues: this.issues };
  }
}

/** The base of a subclass with one fixed code: it is constructed from the options bag alone. */
function withFixedCode(code: TtsErrorCode) {
  return class extends TtsError {
    constructor(options: TtsErrorOptions = {}) {
      super(code, options);
    }
  };
}

/** The service answered an HTTP request with an error (4xx/5xx), after any retries. */
export class TtsServiceError extends TtsError {
  override name = 'TtsServiceError';
}

/** An advanced job ended with `status: failed` (spec: Job failure codes). */
export class TtsJobFailedError extends TtsError {
  override name = 'TtsJobFailedError';
}

/** Standard endpoint returned notice audio instead of speech (spec: POST /text_to_speech_api/). */
export class TtsAllowanceError extends withFixedCode('allowance_exhausted') {
  override name = 'TtsAllowanceError';
}

/** The audio download was refused by the guard (`download_refused`) or failed (`download_failed`). */
export class TtsDownloadError extends TtsError {
  override name = 'TtsDownloadError';
  constructor(code: 'download_refused' | 'download_failed', options: TtsErrorOptions = {}) {
    super(code, { endpoint: 'download', ...options });
  }
}

/** The service could not be reached or did not answer in time (`network`, `timeout`). */
export class TtsNetworkError extends TtsError {
  override name = 'TtsNetworkError';
  constructor(code: 'network' | 'timeout', options: TtsErrorOptions = {}) {
    super(code, options);
  }
}

/** The caller's AbortSignal fired. */
export class TtsAbortError extends withFixedCode('aborted') {
  override name = 'TtsAbortError';
}

/** An advanced job stayed pending (or running) past the limits, and resubmits were used up. */
export class TtsJobStuckError extends withFixedCode('job_stuck') {
  override name = 'TtsJobStuckError';
}

/** The `tts` command line was called wrongly (unknown command, missing TEXT or -o, bad flag): nothing was sent. */
export class TtsUsageError extends withFixedCode('invalid_input') {
  override name = 'TtsUsageError';
}

/** Any thrown value is a TtsError? */
export function isTtsError(e: unknown): e is TtsError {
  return e instanceof TtsError;
}

/** CLI exit codes (documented in the CLI help): 2 input, 3 refused, 4 limited, 5 unavailable. */
export const EXIT_CODES = { input: 2, refused: 3, limited: 4, unavailable: 5, aborted: 130 } as const satisfies Record<
  TtsErrorKind,
  number
>;

/** Exit code for a thrown value; non-TTS errors count as `unavailable`. */
export function exitCodeFor(e: unknown): number {
  return EXIT_CODES[isTtsError(e) ? e.kind : 'unavailable'];
}

/** Maps a standard endpoint error message to a code (spec: Errors / Standard endpoint). */
export function standardCodeFor(status: number, message: string | undefined): TtsErrorCode {
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'internal_error';
  switch (message) {
    case 'Token does not exists':
      return 'token_missing';
    case 'Token does not match':
      return 'token_mismatch';
    case 'voice parameter is required':
      return 'voice_required';
    case 'Unsupported voice requested.':
      return 'unsupported_voice';
    case 'Please set "voice", "speed", "pitch", "text"':
      return 'missing_fields';
    case '"speed" and "pitch" must be finite numbers':
      return 'non_finite';
    default:
      return 'unknown';
  }
}

/** Maps an advanced `code` (creation, polling or job failure) to ours; unknown codes -> `unknown`. */
export function advancedCodeFor(serviceCode: string | undefined, status: number): TtsErrorCode {
  if (serviceCode !== undefined) {
    // Client-only codes are not service codes even if a service sent the same string.
    if (isKnownCode(serviceCode) && !CLIENT_ONLY.has(serviceCode)) return serviceCode;
    return 'unknown';
  }
  // Bodies without a code (spec: 403 HTML for session auth, 405 no body).
  if (status === 403) return 'forbidden';
  if (status === 405) return 'method_not_allowed';
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'internal_error';
  return 'unknown';
}

const CLIENT_ONLY: ReadonlySet<string> = new Set([
  'invalid_input',
  'allowance_exhausted',
  'download_refused',
  'download_failed',
  'bad_response',
  'network',
  'timeout',
  'aborted',
  'job_stuck',
  'unknown',
  'redirect_refused',
  // standard-only names we derive from messages
  'token_missing',
  'token_mismatch',
  'voice_required',
  'unsupported_voice',
  'missing_fields',
  'non_finite',
  'method_not_allowed',
]);

// ---- the rate limiter (src/tts/limiter-*.ts) ----

/** Errors of the rate limiter; aborts reject with the signal's own reason instead. */
export class RateLimiterError extends codedError({
  limiter_store_failed: 'the rate-limit store failed',
  limiter_bad_argument: 'the rate limiter was called with an invalid argument',
}) {
  override name = 'RateLimiterError';
  /** Which of the service's two budgets (spec: Limits). */
  readonly kind: 'standard' | 'advanced';
  constructor(code: RateLimiterErrorCode, options: CodedErrorOptions & { kind: 'standard' | 'advanced' }) {
    super(code, options);
    this.kind = options.kind;
  }
}

export type RateLimiterErrorCode = RateLimiterError['code'];
