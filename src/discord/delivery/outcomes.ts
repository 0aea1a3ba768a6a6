import { UserError } from '../../i18n/errors.ts';
import { formatDate, t, type Lang, type MessageKey, type Vars } from '../../i18n/texts.ts';
import type { EnqueueResult } from '../../speech/queue/options.ts';
import { isTtsError, TtsInputError } from '../../tts/errors.ts';

/** A budget refusal as the character budget reports it (src/billing/budget.ts). */
interface BudgetRefusalLike {
  scope: 'user' | 'guild' | 'account';
  used: number;
  limit: number;
  resetsAt: number;
}

/** Which message tells a user about each service code (src/tts/errors.ts); the rest are "failed (code)". */
const TTS_MESSAGES: Record<string, MessageKey> = {
  invalid_input: 'tts.invalid_input',
  allowance_exhausted: 'tts.allowance_exhausted',
  quota_exceeded: 'tts.quota_exceeded',
  rate_limited: 'tts.rate_limited',
  content_policy_violation: 'tts.content_policy_violation',
  unsupported_voice: 'tts.unsupported_voice',
  invalid_voice: 'tts.unsupported_voice',
  voice_required: 'tts.unsupported_voice',
  text_too_long: 'tts.text_too_long',
  validation_error: 'tts.validation_error',
  token_missing: 'tts.auth',
  token_mismatch: 'tts.auth',
  invalid_token: 'tts.auth',
  service_not_configured: 'tts.auth',
  client_ip_unresolved: 'tts.auth',
  user_unavailable: 'tts.auth',
  internal_error: 'tts.transient',
  tts_retry_exhausted: 'tts.transient',
  unsupported_location: 'tts.transient',
  job_timeout: 'tts.transient',
  job_stuck: 'tts.transient',
  enqueue_failed: 'tts.transient',
  network: 'tts.transient',
  timeout: 'tts.transient',
  download_failed: 'tts.transient',
  bad_response: 'tts.transient',
  download_refused: 'tts.download_refused',
  redirect_refused: 'tts.misconfigured',
};

/** The localised message for a budget refusal: which limit, the numbers, and when it resets. */
function describeRefusal(lang: Lang, r: BudgetRefusalLike): string {
  return t(lang, `budget.${r.scope}`, { used: r.used, limit: r.limit, resets: formatDate(lang, r.resetsAt) });
}

function isRefusal(value: unknown): value is BudgetRefusalLike {
  const r = value as BudgetRefusalLike | undefined;
  return typeof r === 'object' && r !== null && ['user', 'guild', 'account'].includes(r.scope) && typeof r.limit === 'number';
}

/**
 * What to tell the user about a failure, in their language, or null when it is unexpected (the
 * caller logs it and shows the generic message). Never includes raw error text, so no secret leaks.
 */
export function describeFailure(lang: Lang, error: unknown, extra: Vars = {}): string | null {
  if (error instanceof UserError) return t(lang, error.code, error.vars);
  const refusal = (error as { refusal?: unknown } | null)?.refusal;
  if (isRefusal(refusal)) return describeRefusal(lang, refusal);
  if (error instanceof TtsInputError) {
    // What the member can act on, in their language: the validator's own text is English for the log.
    const told = error.issues.map((i) => {
      const key = TTS_MESSAGES[i.code];
      return key && key !== 'tts.invalid_input' ? t(lang, key, { ...extra, max: i.max ?? extra.max ?? '' }) : undefined;
    });
    if (told.every((m) => m !== undefined)) return [...new Set(told)].join(' ');
    return t(lang, 'tts.invalid_input', { details: [...new Set(error.issues.map((i) => i.field))].join(', ') });
  }
  if (isTtsError(error)) {
    const key = TTS_MESSAGES[error.code] ?? 'tts.failed';
    const seconds = Math.ceil((error.context.retryAfterMs ?? 0) / 1000);
    return t(lang, key, {
      code: error.context.serviceCode ?? error.code,
      details: '',
      seconds,
      available: error.context.available ?? 0,
      max: extra.max ?? '',
      voice: extra.voice ?? '',
      ...extra,
    });
  }
  // The speech core wraps what went wrong underneath (e.g. synthesis_failed with a TtsError cause).
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (cause !== undefined && cause !== error) return describeFailure(lang, cause, extra);
  return null;
}

/** Why the queue did not take a message or request, in the member's language. */
export function describeQueueRefusal(lang: Lang, refusal: Extract<EnqueueResult, { ok: false }>): string {
  if (refusal.reason === 'member_queue_full') return t(lang, 'queue.member_full', { limit: refusal.limit ?? 0 });
  return t(lang, refusal.reason === 'not_saved' ? 'queue.not_saved' : 'queue.closed');
}
