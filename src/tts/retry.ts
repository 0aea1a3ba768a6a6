/**
 * Where a retry is decided (spec: Errors / Standard endpoint retry guidance, Advanced retry
 * guidance). Every exchange with the service runs through `withRetries`: an attempt says how it
 * ended, a rule says whether and when to try again, and the loop keeps the counts and waits on
 * the injected clock. Standard speech, job creation, polling and the audio download share the
 * loop and differ only in their rule (the shape of discord.js REST's handlers/Shared.ts).
 */
import type { AttemptOutcome } from '../billing/attempts.ts';
import type { Clock } from '../util/clock.ts';
import { TtsAbortError, type TtsError, type TtsErrorContext } from './errors.ts';

/** The service's API calls: standard speech, advanced job creation, and polling a job. */
export type ServiceCall = 'standard' | 'advanced' | 'poll';

/** Retry numbers from the spec's retry guidance. */
export interface RetryPolicy {
  /** Standard 5xx backoff: 1, 2, 4, 8 s. */
  standardBackoffMs: readonly number[];
  /** Advanced 5xx backoff (creation and polling): 2, 4, 8 s. */
  advancedBackoffMs: readonly number[];
  /** 5xx retries after the first attempt ("up to 3 retries"). */
  maxServerRetries: number;
  /** Standard 429: wait `reset_in`, at least 2 s. */
  standardMinRateWaitMs: number;
  /** Advanced 429 `rate_limited`: wait `retry_after` / Retry-After, at least 5 s. */
  advancedMinRateWaitMs: number;
  /** 429 retries before giving up with `rate_limited`. */
  maxRateLimitRetries: number;
  /** Network failure / timeout retries ("retry 2 to 3 times"). */
  networkRetries: number;
}

export const RETRY_DEFAULTS = {
  standardBackoffMs: [1000, 2000, 4000, 8000],
  advancedBackoffMs: [2000, 4000, 8000],
  maxServerRetries: 3,
  standardMinRateWaitMs: 2000,
  advancedMinRateWaitMs: 5000,
  maxRateLimitRetries: 3,
  networkRetries: 2,
} as const satisfies RetryPolicy;

/** A failed attempt. `answered`: the service sent an HTTP answer (its status is in the error's context). */
export interface Failure {
  ok: false;
  error: TtsError;
  answered: boolean;
}

/** How one attempt ended. */
export type Attempt<T> = { ok: true; value: T } | Failure;

/** Retries spent so far, per reason: the spec bounds each on its own. */
export interface RetriesSpent {
  server: number;
  rate: number;
  network: number;
}

/** What a rule says about one failure. */
export interface RetryVerdict {
  /** Try again after `waitMs`, spending one retry of `reason`; absent: the failure is final. */
  retry?: { reason: keyof RetriesSpent; waitMs: number };
  /** The service said to hold off this long (429), whether or not we retry. */
  rateLimitedMs?: number;
}

type RetryRule = (failure: Failure, spent: Readonly<RetriesSpent>) => RetryVerdict;

/** A failure before any byte of the request could reach the service (no connection was made). */
function neverReached(error: TtsError): boolean {
  const code = error.context.causeInfo?.code;
  return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'CONNECT_TIMEOUT';
}

/** The spec's retry guidance for one API call. */
export function serviceRetryRule(call: ServiceCall, policy: RetryPolicy): RetryRule {
  const backoff = call === 'standard' ? policy.standardBackoffMs : policy.advancedBackoffMs;
  const step = (n: number) => backoff[Math.min(n, backoff.length - 1)] ?? 0;
  const minRateWaitMs = call === 'standard' ? policy.standardMinRateWaitMs : policy.advancedMinRateWaitMs;
  return ({ error, answered }, spent) => {
    if (!answered) {
      // Timeouts and network failures (spec: "retry 2 to 3 times"): standard speech and polls are
      // safe to repeat (the history serves the same text free); a job creation only when it cannot
      // have reached the service, since a second creation could charge twice.
      const network = error.code === 'network' || error.code === 'timeout';
      const safe = call !== 'advanced' || neverReached(error);
      return network && safe && spent.network < policy.networkRetries ? { retry: { reason: 'network', waitMs: step(spent.network) } } : {};
    }
    const status = error.context.status ?? 0;
    if (status === 429 && error.code === 'rate_limited') {
      const waitMs = error.context.retryAfterMs ?? minRateWaitMs;
      return { rateLimitedMs: waitMs, ...(spent.rate < policy.maxRateLimitRetries ? { retry: { reason: 'rate', waitMs } } : {}) };
    }
    if (status >= 500 && spent.server < policy.maxServerRetries) return { retry: { reason: 'server', waitMs: step(spent.server) } };
    // Other 4xx (authentication included), quota_exceeded, or retries used up: final.
    return {};
  };
}

/**
 * The audio download: network trouble and 5xx may pass on a second try (a 403 or 404 will not);
 * `retries` in all, waiting 1 s, 2 s, 4 s...
 */
export function downloadRetryRule(retries: number): RetryRule {
  return ({ error }, spent) => {
    const status = error.context.status;
    const server = error.code === 'download_failed' && (status === undefined || status >= 500);
    const used = spent.network + spent.server;
    if (!(server || error.code === 'network' || error.code === 'timeout') || used >= retries) return {};
    return { retry: { reason: server ? 'server' : 'network', waitMs: 1000 * 2 ** used } };
  };
}

export interface RetryLoop {
  rule: RetryRule;
  clock: Clock;
  signal?: AbortSignal | undefined;
  /** Context of the abort error when the signal fires during a wait (attempts added). */
  context: TtsErrorContext;
  /** Told before each wait, so the caller can log it. */
  onRetry?: (failure: Failure, retry: NonNullable<RetryVerdict['retry']>, attempts: number) => void;
  /** Told whenever the service asks to hold off, so a shared rate budget can hold off too. */
  onRateLimited?: (ms: number) => void;
}

/** Runs `attempt` (numbered from 1) until it succeeds or the rule gives up, then throws its error. */
export async function withRetries<T>(
  loop: RetryLoop,
  attempt: (attempts: number) => Promise<Attempt<T>>,
): Promise<{ value: T; attempts: number }> {
  const spent: RetriesSpent = { server: 0, rate: 0, network: 0 };
  for (let attempts = 1; ; attempts++) {
    const result = await attempt(attempts);
    if (result.ok) return { value: result.value, attempts };
    const verdict = loop.rule(result, spent);
    if (verdict.rateLimitedMs !== undefined) loop.onRateLimited?.(verdict.rateLimitedMs);
    if (!verdict.retry) throw result.error;
    spent[verdict.retry.reason]++;
    loop.onRetry?.(result, verdict.retry, attempts);
    await pause(loop.clock, verdict.retry.waitMs, loop.signal, { ...loop.context, attempts });
  }
}

/** Waits on the injected clock; the signal firing during the wait is a TtsAbortError with `context`. */
export async function pause(clock: Clock, ms: number, signal: AbortSignal | undefined, context: TtsErrorContext): Promise<void> {
  try {
    await clock.sleep(ms, signal);
  } catch (err) {
    if (signal?.aborted) throw new TtsAbortError(context);
    throw err;
  }
}

/**
 * What a failed attempt may have cost: a 4xx (429 and quota_exceeded included) is free, a 5xx may
 * come after the charge; an exchange that broke after sending may have been charged (the service
 * keeps working when we hang up), one that never connected was not.
 */
export function chargeOfFailure(failure: Failure): AttemptOutcome {
  if (failure.answered) return (failure.error.context.status ?? 0) >= 500 ? 'maybe_charged' : 'not_charged';
  return neverReached(failure.error) ? 'not_charged' : 'maybe_charged';
}
