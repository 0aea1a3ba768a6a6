/**
 * The TTS service client (spec: tts-service-interface.md): the standard endpoint, the advanced job
 * endpoints, retries exactly as the spec's retry guidance says, the shared rate budget, and the
 * guarded audio download. Knows nothing of Discord. All waits go through the injected Clock.
 */
import { randomInt } from 'node:crypto';
import type { Dispatcher } from './transport.ts';
import { z } from 'zod';
import { systemClock, type Clock } from '../util/clock.ts';
import type { AttemptOutcome, BillingHooks } from './billing.ts';
import { DOWNLOAD_DEFAULTS, downloadAudio, type DownloadOptions } from './download.ts';
import {
  TRANSIENT_JOB_CODES,
  TtsAbortError,
  TtsAllowanceError,
  TtsError,
  TtsInputError,
  TtsJobFailedError,
  TtsJobStuckError,
  TtsServiceError,
  advancedCodeFor,
  isTtsError,
  standardCodeFor,
  type TtsErrorCode,
  type TtsErrorContext,
} from './errors.ts';
import { header, type HttpResponse } from './http.ts';
import { sendApi, showUrl } from './redirect.ts';
import type { RateKind, RateLimiter } from './limiter.ts';
import {
  LIMITS,
  standardEffective,
  validateAdvanced,
  validateStandard,
  validateToken,
  type AdvancedRequest,
  type Plan,
  type StandardRequest,
} from './validation.ts';

/** The subset of pino the client uses. */
export interface TtsLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** Retry numbers from the spec's retry guidance (Errors / Standard endpoint, Advanced retry guidance). */
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

/** Advanced job handling (spec: States and transitions, GET /api/advanced-tts/jobs/{job_id}/). */
export interface JobPolicy {
  /** Wait between polls when `poll_after_ms` is absent (spec: 3 to 5 s). */
  defaultPollMs: number;
  /** Floor under the service's `poll_after_ms`, so a bad value cannot make us hammer the service. */
  minPollMs: number;
  /** A job still pending after this long may be stuck; submit a new one (spec: Notes 1). */
  stuckPendingMs: number;
  /** A job not finished after this long (any state) is given up on like a stuck one. */
  maxJobAgeMs: number;
  /** New jobs submitted after a transient failure or a stuck job, at most. */
  maxResubmits: number;
}

export interface TtsClientOptions {
  baseUrl: string;
  /** The 64-character account access token; only ever sent in the `token` header. */
  token: string;
  plan: Plan;
  /** The per-IP rate budget; acquired before every standard and creation attempt (not polls). */
  limiter: RateLimiter;
  clock: Clock;
  dispatcher: Dispatcher | undefined;
  /** Deadline for one HTTP exchange (real time). */
  requestTimeoutMs: number;
  download: DownloadOptions;
  logger: TtsLogger;
  retry: RetryPolicy;
  jobs: JobPolicy;
}

/** Constructor input: the token is required, everything else falls back to DEFAULTS. */
export type TtsClientInit = { token: string } & Partial<Omit<TtsClientOptions, 'token' | 'download' | 'retry' | 'jobs'>> & {
  download?: Partial<DownloadOptions>;
  retry?: Partial<RetryPolicy>;
  jobs?: Partial<JobPolicy>;
};

/** A limiter that always grants: the default when the caller has no shared budget. */
export const NO_LIMIT: RateLimiter = { acquire: async () => {}, block: () => {} };

const SILENT: TtsLogger = { debug() {}, info() {}, warn() {}, error() {} };

/** Defaults merged under the constructor's options (nested `download`, `retry`, `jobs` field by field). */
export const DEFAULTS = {
  baseUrl: 'https://ondoku3.com',
  plan: 'free',
  limiter: NO_LIMIT,
  clock: systemClock,
  dispatcher: undefined,
  requestTimeoutMs: 30_000,
  download: DOWNLOAD_DEFAULTS,
  logger: SILENT,
  retry: {
    standardBackoffMs: [1000, 2000, 4000, 8000],
    advancedBackoffMs: [2000, 4000, 8000],
    maxServerRetries: 3,
    standardMinRateWaitMs: 2000,
    advancedMinRateWaitMs: 5000,
    maxRateLimitRetries: 3,
    networkRetries: 2,
  },
  jobs: {
    defaultPollMs: 4000,
    minPollMs: 250,
    stuckPendingMs: 5 * 60_000,
    maxJobAgeMs: 15 * 60_000,
    maxResubmits: 2,
  },
} as const satisfies Omit<TtsClientOptions, 'token'>;

export interface CallOptions {
  /** Who the request is for (a guild id); a fair limiter rotates between keys. */
  key?: string;
  signal?: AbortSignal;
  /** Told what each attempt may have cost (README "Characters are money"). */
  billing?: BillingHooks;
}

export interface Substitution {
  requested: number;
  used: number;
}

export interface StandardResult {
  url: string;
  pk: number;
  text: string;
  /** Out-of-range speed/pitch the service replaced by its default (spec: Standard speech request). */
  substituted: { speed?: Substitution; pitch?: Substitution };
}

export type JobStatus = 'pending' | 'running' | 'succeeded' | 'failed';

export interface CreatedJob {
  jobId: string;
  jobToken: string;
  status: JobStatus;
  minPollAfterMs: number;
  pollUrl: string;
  /** The seed sent with the request, when one was. */
  seed?: number;
}

export interface JobPoll {
  jobId: string;
  status: JobStatus;
  pollAfterMs?: number;
  url?: string;
  pk?: number;
  seed?: number;
  /** Failure code mapped to ours (`unknown` when the service's code is new to us). */
  code?: TtsErrorCode;
  /** The service's raw failure code. */
  serviceCode?: string;
  error?: string;
}

/** A job as the caller persists it, so it can be resumed after a restart. */
export interface StoredJob {
  jobId: string;
  jobToken: string;
  /** Clock time of creation (ms); the stuck-job rule is measured from it. */
  createdAt: number;
  /** The caller's request (its `seed` set only if the caller fixed it). */
  request: AdvancedRequest;
}

export interface CreatedJobRecord extends StoredJob {
  /** Which submission this is (1 = first). */
  attempt: number;
  /** The seed sent for this job (the caller's, or a fresh one on a resubmit). */
  seed?: number;
  /** The job this one replaces (after a transient failure or a stuck job). */
  replaces?: string;
}

export interface NarrateProgress {
  state: 'queued' | 'pending' | 'running' | 'succeeded' | 'failed';
  jobId?: string;
  seed?: number;
  /** Submission number, 1-based. */
  attempt: number;
  /** Failure code, with state `failed`. */
  code?: TtsErrorCode;
}

export interface NarrateOptions extends CallOptions {
  onProgress?: (e: NarrateProgress) => void;
  /** Called (and awaited) as soon as a job exists, before any poll: persist it here. */
  onJobCreated?: (job: CreatedJobRecord) => void | Promise<void>;
}

export interface NarrateResult {
  url: string;
  pk: number;
  seed?: number;
  jobId: string;
}

const JOB_STATUS = z.enum(['pending', 'running', 'succeeded', 'failed']);

const StandardResponse = z.object({ text: z.string(), url: z.string().min(1), pk: z.number(), share: z.number().optional() });
const StandardErrorBody = z.looseObject({ error: z.string().optional(), reset_in: z.number().optional() });
const CreateResponse = z.object({
  job_id: z.string().min(1),
  job_token: z.string().min(1),
  status: JOB_STATUS,
  min_poll_after_ms: z.number().nonnegative(),
  poll_url: z.string(),
});
const AdvancedErrorBody = z.looseObject({
  code: z.string().optional(),
  error: z.string().optional(),
  retry_after: z.number().optional(),
  available: z.number().optional(),
  error_code: z.string().optional(),
});
const PollResponse = z.object({
  job_id: z.string(),
  status: JOB_STATUS,
  poll_after_ms: z.number().nonnegative().optional(),
  url: z.string().min(1).optional(),
  pk: z.number().optional(),
  seed: z.number().optional(),
  code: z.string().optional(),
  error: z.string().optional(),
});

type Endpoint = 'standard' | 'advanced' | 'poll';

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Seconds from a Retry-After header (delta-seconds or an HTTP date), if usable. */
function retryAfterHeader(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (Number.isFinite(n)) return n;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
}

/** Client of the TTS service; one per access token. */
export class TtsClient {
  readonly options: Omit<TtsClientOptions, 'token'>;
  // ES private: not visible to JSON.stringify, util.inspect or loggers serialising the client.
  readonly #token: string;

  constructor(init: TtsClientInit) {
    const { token, download, retry, jobs, ...rest } = init;
    const merged = { ...DEFAULTS, ...stripUndefined(rest) };
    const baseHost = new URL(merged.baseUrl).hostname;
    const dl = { ...DEFAULTS.download, ...stripUndefined(download ?? {}) };
    this.options = {
      ...merged,
      baseUrl: merged.baseUrl.replace(/\/+$/, ''),
      // The service's own host may serve audio too (the emulator does).
      download: { ...dl, allowHosts: [...new Set([...dl.allowHosts, baseHost])] },
      retry: { ...DEFAULTS.retry, ...stripUndefined(retry ?? {}) },
      jobs: { ...DEFAULTS.jobs, ...stripUndefined(jobs ?? {}) },
    };
    this.#token = token;
  }

  /** Standard speech (POST /text_to_speech_api/); throws `allowance_exhausted` on notice audio. */
  async speak(req: StandardRequest, opts: CallOptions = {}): Promise<StandardResult> {
    const v = validateStandard(req);
    if (!v.ok) throw new TtsInputError({ issues: v.issues, endpoint: 'standard' });
    this.#checkToken('standard');
    const { res, attempts } = await this.#call('standard', '/text_to_speech_api/', JSON.stringify(v.value), opts);
    const billed = (outcome: AttemptOutcome, pk?: number) =>
      opts.billing?.onEvent?.({ kind: 'attempt', endpoint: 'standard', attempt: attempts, outcome, ...(pk !== undefined ? { pk } : {}) });
    const body = StandardResponse.safeParse(parseJson(res.text));
    if (!body.success) {
      billed('maybe_charged'); // a 2xx we cannot read may still have been charged
      throw new TtsServiceError('bad_response', { endpoint: 'standard', status: res.status, attempts });
    }
    const { text, url, pk, share } = body.data;
    // Notice audio (allowance insufficient) comes back as HTTP 200 in the same shape; it is
    // recognised by share 0 or by a text other than ours (spec: POST /text_to_speech_api/).
    if (share === 0 || text !== v.value.text) {
      billed('not_charged'); // notice audio is free
      this.options.logger.warn({ endpoint: 'standard', pk, share }, 'tts notice audio: allowance exhausted');
      throw new TtsAllowanceError({ endpoint: 'standard', status: res.status, attempts });
    }
    billed('charged', pk);
    const substituted: StandardResult['substituted'] = {};
    for (const field of ['speed', 'pitch'] as const) {
      const requested = v.value[field];
      const used = standardEffective(field, requested);
      if (used !== requested) substituted[field] = { requested, used };
    }
    return { url, pk, text, substituted };
  }

  /** Creates an advanced job (POST /api/advanced-tts/) after local validation. */
  async createJob(req: AdvancedRequest, opts: CallOptions = {}): Promise<CreatedJob> {
    const v = validateAdvanced(req, this.options.plan);
    if (!v.ok) throw new TtsInputError({ issues: v.issues, endpoint: 'advanced' });
    this.#checkToken('advanced');
    return this.#createJob(v.value, opts);
  }

  /** Polls an advanced job once (GET /api/advanced-tts/jobs/{id}/), retrying 5xx/429/network. */
  async pollJob(jobId: string, jobToken: string, opts: CallOptions = {}): Promise<JobPoll> {
    const context: TtsErrorContext = { endpoint: 'poll', jobId };
    // Built from the job id, not from the response's poll_url, so the job token only ever goes
    // to the configured service.
    const url = `${this.options.baseUrl}/api/advanced-tts/jobs/${encodeURIComponent(jobId)}/`;
    const { retry } = this.options;
    let serverRetries = 0;
    let rateRetries = 0;
    let netRetries = 0;
    for (let attempts = 1; ; attempts++) {
      let res: HttpResponse;
      try {
        res = await sendApi(url, {
          method: 'GET',
          headers: { 'x-job-token': jobToken, accept: 'application/json' },
          dispatcher: this.options.dispatcher,
          timeoutMs: this.options.requestTimeoutMs,
          signal: opts.signal,
          context: { ...context, attempts },
          ...this.#redirectOptions('poll', jobToken),
        });
      } catch (err) {
        if (isTtsError(err) && (err.code === 'network' || err.code === 'timeout') && netRetries < retry.networkRetries) {
          await this.#sleep(retry.advancedBackoffMs[Math.min(netRetries++, retry.advancedBackoffMs.length - 1)] ?? 0, opts.signal, context);
          continue;
        }
        throw err;
      }
      if (res.status === 200) {
        const p = PollResponse.safeParse(parseJson(res.text));
        if (!p.success || (p.data.status === 'succeeded' && (p.data.url === undefined || p.data.pk === undefined))) {
          throw new TtsServiceError('bad_response', { ...context, status: 200, attempts });
        }
        return this.#toPoll(p.data);
      }
      const err = this.#errorFrom('poll', res, attempts, jobToken);
      this.#logFailure('poll', res.status, attempts, err.code);
      // Polls are outside the 30/10 creation budget, so no limiter here; the planned poll limits
      // would answer 429 with Retry-After (spec: Limits, planned advanced limits).
      if (res.status === 429 && rateRetries < retry.maxRateLimitRetries) {
        rateRetries++;
        await this.#sleep(err.context.retryAfterMs ?? retry.advancedMinRateWaitMs, opts.signal, context);
        continue;
      }
      if (res.status >= 500 && serverRetries < retry.maxServerRetries) {
        await this.#sleep(retry.advancedBackoffMs[Math.min(serverRetries++, retry.advancedBackoffMs.length - 1)] ?? 0, opts.signal, context);
        continue;
      }
      throw err;
    }
  }

  /** Runs an advanced job to its end: create, poll, resubmit on transient failure or a stuck job. */
  async narrate(req: AdvancedRequest, opts: NarrateOptions = {}): Promise<NarrateResult> {
    const v = validateAdvanced(req, this.options.plan);
    if (!v.ok) throw new TtsInputError({ issues: v.issues, endpoint: 'advanced' });
    this.#checkToken('advanced');
    return this.#drive(v.value, undefined, opts);
  }

  /** Continues a job created earlier (e.g. before a restart) with the same rules as `narrate`. */
  async resumeJob(job: StoredJob, opts: NarrateOptions = {}): Promise<NarrateResult> {
    const v = validateAdvanced(job.request, this.options.plan);
    if (!v.ok) throw new TtsInputError({ issues: v.issues, endpoint: 'advanced', jobId: job.jobId });
    this.#checkToken('advanced');
    return this.#drive(v.value, { ...job, request: v.value }, opts);
  }

  /** Downloads audio from a URL the service returned, under the download guard. */
  async download(url: string, opts: { signal?: AbortSignal } = {}): Promise<Buffer> {
    return downloadAudio(url, this.options.download, { dispatcher: this.options.dispatcher, clock: this.options.clock, signal: opts.signal });
  }

  // ---------------------------------------------------------------------------------------------

  #checkToken(endpoint: 'standard' | 'advanced'): void {
    const t = validateToken(this.#token);
    if (!t.ok) {
      // The service would refuse it (spec: Authentication 2-3); nothing is sent.
      const issues = t.issues.map((i) => ({ ...i, code: endpoint === 'standard' ? 'token_missing' : 'invalid_token' }));
      throw new TtsInputError({ issues, endpoint });
    }
  }

  async #createJob(value: AdvancedRequest, opts: CallOptions): Promise<CreatedJob> {
    const { res, attempts } = await this.#call('advanced', '/api/advanced-tts/', JSON.stringify(value), opts);
    const body = CreateResponse.safeParse(parseJson(res.text));
    if (!body.success) {
      opts.billing?.onEvent?.({ kind: 'attempt', endpoint: 'advanced', attempt: attempts, outcome: 'maybe_charged' });
      throw new TtsServiceError('bad_response', { endpoint: 'advanced', status: res.status, attempts });
    }
    const d = body.data;
    // Charged at creation (README "Characters are money"); refunded only if the job fails.
    opts.billing?.onEvent?.({ kind: 'attempt', endpoint: 'advanced', attempt: attempts, outcome: 'charged', jobId: d.job_id });
    const job: CreatedJob = { jobId: d.job_id, jobToken: d.job_token, status: d.status, minPollAfterMs: d.min_poll_after_ms, pollUrl: d.poll_url };
    if (value.seed !== undefined) job.seed = value.seed;
    this.options.logger.debug({ endpoint: 'advanced', jobId: job.jobId, attempts }, 'tts job created');
    return job;
  }

  /**
   * One request to the standard or creation endpoint with the spec's retry rules; returns the
   * 2xx response or throws. Acquires the rate budget before every attempt. Every attempt that
   * does not return a 2xx reports what it may have cost to `opts.billing` (the caller reports 2xx).
   */
  async #call(endpoint: 'standard' | 'advanced', path: string, body: string, opts: CallOptions): Promise<{ res: HttpResponse; attempts: number }> {
    const { retry, limiter, logger } = this.options;
    const kind: RateKind = endpoint;
    const backoff = endpoint === 'standard' ? retry.standardBackoffMs : retry.advancedBackoffMs;
    let serverRetries = 0;
    let rateRetries = 0;
    let netRetries = 0;
    const billed = (attempt: number, outcome: AttemptOutcome) => opts.billing?.onEvent?.({ kind: 'attempt', endpoint, attempt, outcome });
    for (let attempts = 1; ; attempts++) {
      const context: TtsErrorContext = { endpoint, attempts };
      await this.#acquire(kind, opts, context);
      await opts.billing?.beforeSend?.({ endpoint, attempt: attempts });
      if (opts.signal?.aborted) throw new TtsAbortError(context); // nothing left this host
      logger.debug({ endpoint, attempts }, 'tts request');
      let res: HttpResponse;
      try {
        res = await sendApi(this.options.baseUrl + path, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json', token: this.#token },
          body,
          dispatcher: this.options.dispatcher,
          timeoutMs: this.options.requestTimeoutMs,
          signal: opts.signal,
          context,
          ...this.#redirectOptions(endpoint),
        });
      } catch (err) {
        // Aborted or broken after sending: the service may have charged (it keeps working when we hang up).
        billed(attempts, isTtsError(err) && this.#neverReached(err) ? 'not_charged' : 'maybe_charged');
        if (isTtsError(err) && netRetries < retry.networkRetries && this.#mayRetryNetwork(endpoint, err)) {
          logger.warn({ endpoint, attempts, code: err.code }, 'tts network failure, retrying');
          await this.#sleep(backoff[Math.min(netRetries++, backoff.length - 1)] ?? 0, opts.signal, context);
          continue;
        }
        throw err;
      }
      if (res.status >= 200 && res.status < 300) return { res, attempts };
      // 4xx (429 and quota_exceeded included) are not charged; a 5xx may come after the charge.
      billed(attempts, res.status >= 500 ? 'maybe_charged' : 'not_charged');
      const err = this.#errorFrom(endpoint, res, attempts);
      this.#logFailure(endpoint, res.status, attempts, err.code);
      if (res.status === 429 && err.code === 'rate_limited') {
        const waitMs = err.context.retryAfterMs ?? (endpoint === 'standard' ? retry.standardMinRateWaitMs : retry.advancedMinRateWaitMs);
        // Tell the shared budget first, so other callers hold off too.
        limiter.block(kind, waitMs);
        if (rateRetries >= retry.maxRateLimitRetries) throw err;
        rateRetries++;
        await this.#sleep(waitMs, opts.signal, context);
        continue;
      }
      if (res.status >= 500 && serverRetries < retry.maxServerRetries) {
        await this.#sleep(backoff[Math.min(serverRetries++, backoff.length - 1)] ?? 0, opts.signal, context);
        continue;
      }
      // Other 4xx (authentication included), quota_exceeded, or retries used up: final.
      throw err;
    }
  }

  /**
   * Standard: retry timeouts and network failures (spec: "on a network timeout retry 2 to 3
   * times"; the same text is served from history, not charged twice). Job creation: only when the
   * request cannot have reached the service, since a retried creation could charge twice.
   */
  #mayRetryNetwork(endpoint: 'standard' | 'advanced', err: TtsError): boolean {
    if (err.code !== 'network' && err.code !== 'timeout') return false;
    if (endpoint === 'standard') return true;
    return this.#neverReached(err);
  }

  /** A failure before any byte of the request could reach the service (no connection was made). */
  #neverReached(err: TtsError): boolean {
    const code = err.context.causeInfo?.code;
    return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'CONNECT_TIMEOUT';
  }

  /** Builds the typed error for a non-2xx answer, with the wait the service asked for. */
  #errorFrom(endpoint: Endpoint, res: HttpResponse, attempts: number, jobToken?: string): TtsServiceError {
    const json = parseJson(res.text);
    const context: TtsErrorContext = { endpoint, status: res.status, attempts };
    if (endpoint === 'standard') {
      const b = StandardErrorBody.safeParse(json);
      const message = b.success ? b.data.error : undefined;
      const code = standardCodeFor(res.status, message);
      if (message !== undefined) context.serviceMessage = this.#scrub(message, jobToken);
      if (res.status === 429) {
        const resetIn = b.success ? b.data.reset_in : undefined;
        context.retryAfterMs = Math.max(this.options.retry.standardMinRateWaitMs, (resetIn ?? 0) * 1000);
      }
      return new TtsServiceError(code, { ...context, ...(code === 'unknown' ? { message: `The service refused the request: ${context.serviceMessage ?? `HTTP ${res.status}`}` } : {}) });
    }
    const b = AdvancedErrorBody.safeParse(json);
    const body = b.success ? b.data : {};
    const code = advancedCodeFor(body.code, res.status);
    if (body.code !== undefined) context.serviceCode = this.#scrub(body.code, jobToken);
    if (body.error !== undefined) context.serviceMessage = this.#scrub(body.error, jobToken);
    if (body.available !== undefined) context.available = body.available;
    if (res.status === 429) {
      const seconds = body.retry_after ?? retryAfterHeader(header(res.headers, 'retry-after'), this.options.clock.now()) ?? 0;
      context.retryAfterMs = Math.max(this.options.retry.advancedMinRateWaitMs, seconds * 1000);
    }
    return new TtsServiceError(code, { ...context, ...(code === 'unknown' ? { message: `The service answered with an unknown code: ${context.serviceCode ?? `HTTP ${res.status}`}` } : {}) });
  }

  /** Redirect handling for sendApi: messages scrubbed of secrets, followed hops logged for the operator. */
  #redirectOptions(endpoint: Endpoint, jobToken?: string) {
    return {
      baseUrl: this.options.baseUrl,
      scrub: (s: string) => this.#scrub(s, jobToken),
      onRedirect: (status: number, to: URL) => {
        this.options.logger.warn({ endpoint, status, location: this.#scrub(showUrl(to), jobToken) }, 'tts request redirected; point TTS_BASE_URL at the new address');
      },
    };
  }

  /** Service text is echoed into errors; make sure no secret rides along. */
  #scrub(s: string, jobToken?: string): string {
    let out = s.split(this.#token).join('[redacted]');
    if (jobToken) out = out.split(jobToken).join('[redacted]');
    return out;
  }

  #logFailure(endpoint: Endpoint, status: number, attempts: number, code: string): void {
    this.options.logger.warn({ endpoint, status, attempts, code }, 'tts request failed');
  }

  async #acquire(kind: RateKind, opts: CallOptions, context: TtsErrorContext): Promise<void> {
    if (opts.signal?.aborted) throw new TtsAbortError(context);
    try {
      await this.options.limiter.acquire(kind, { ...(opts.key !== undefined ? { key: opts.key } : {}), ...(opts.signal ? { signal: opts.signal } : {}) });
    } catch (err) {
      if (opts.signal?.aborted) throw new TtsAbortError(context);
      throw err;
    }
  }

  async #sleep(ms: number, signal: AbortSignal | undefined, context: TtsErrorContext): Promise<void> {
    try {
      await this.options.clock.sleep(ms, signal);
    } catch (err) {
      if (signal?.aborted) throw new TtsAbortError(context);
      throw err;
    }
  }

  #toPoll(d: z.infer<typeof PollResponse>): JobPoll {
    const p: JobPoll = { jobId: d.job_id, status: d.status };
    if (d.poll_after_ms !== undefined) p.pollAfterMs = d.poll_after_ms;
    if (d.url !== undefined) p.url = d.url;
    if (d.pk !== undefined) p.pk = d.pk;
    if (d.seed !== undefined) p.seed = d.seed;
    if (d.error !== undefined) p.error = d.error;
    if (d.status === 'failed') {
      // A failed job without a code is still a failure (spec: unknown codes are failures).
      p.code = d.code === undefined ? 'unknown' : advancedCodeFor(d.code, 200);
      if (d.code !== undefined) p.serviceCode = d.code;
    }
    return p;
  }

  #freshSeed(used: ReadonlySet<number>): number {
    for (;;) {
      const s = randomInt(LIMITS.int32.min, LIMITS.int32.max);
      if (!used.has(s)) return s;
    }
  }

  /** Creates (unless resuming) and follows jobs until one succeeds or a final answer comes. */
  async #drive(request: AdvancedRequest, existing: StoredJob | undefined, opts: NarrateOptions): Promise<NarrateResult> {
    const { clock, jobs, logger } = this.options;
    const seedFixed = request.seed !== undefined;
    const usedSeeds = new Set<number>();
    let job: StoredJob | undefined = existing;
    let status: JobStatus | undefined;
    let firstWaitMs = 0;
    let replaces: string | undefined;
    for (let attempt = 1; ; attempt++) {
      if (!job) {
        // Spec: "on a failed job check code and retry with a different seed" - unless the caller
        // fixed the seed (it wants that timbre), then the same seed is sent again. A seed is always
        // sent, so the result can say which one was used and a good result can be repeated.
        const seed = seedFixed ? request.seed : this.#freshSeed(usedSeeds);
        opts.onProgress?.({ state: 'queued', attempt, ...(seed !== undefined ? { seed } : {}) });
        const created = await this.#createJob(seed === undefined ? request : { ...request, seed }, opts);
        if (seed !== undefined) usedSeeds.add(seed);
        job = { jobId: created.jobId, jobToken: created.jobToken, createdAt: clock.now(), request };
        const record: CreatedJobRecord = { ...job, attempt };
        if (seed !== undefined) record.seed = seed;
        if (replaces !== undefined) record.replaces = replaces;
        await opts.onJobCreated?.(record);
        status = created.status;
        firstWaitMs = created.minPollAfterMs;
      }
      const outcome = await this.#follow(job, status, firstWaitMs, attempt, opts);
      if (outcome.kind === 'succeeded') return outcome.result;
      if (outcome.seed !== undefined) usedSeeds.add(outcome.seed);
      const canResubmit = attempt <= jobs.maxResubmits;
      if (outcome.kind === 'failed') {
        if (!TRANSIENT_JOB_CODES.includes(outcome.error.code) || !canResubmit) throw outcome.error;
        logger.warn({ jobId: job.jobId, code: outcome.error.code, attempt }, 'tts job failed, resubmitting');
      } else {
        if (!canResubmit) throw new TtsJobStuckError({ endpoint: 'poll', jobId: job.jobId, attempts: attempt });
        logger.warn({ jobId: job.jobId, attempt }, 'tts job stuck, submitting a new one');
      }
      replaces = job.jobId;
      job = undefined;
      status = undefined;
    }
  }

  /** Polls one job until it ends or is judged stuck (spec: polling timing, Notes 1). */
  async #follow(
    job: StoredJob,
    initial: JobStatus | undefined,
    firstWaitMs: number,
    attempt: number,
    opts: NarrateOptions,
  ): Promise<
    | { kind: 'succeeded'; result: NarrateResult }
    | { kind: 'failed'; error: TtsJobFailedError; seed?: number }
    | { kind: 'stuck'; seed?: number }
  > {
    const { clock, jobs } = this.options;
    const context: TtsErrorContext = { endpoint: 'poll', jobId: job.jobId, attempts: attempt };
    let last = initial;
    let seed: number | undefined;
    if (last !== undefined) opts.onProgress?.({ state: last === 'running' ? 'running' : 'pending', jobId: job.jobId, attempt });
    let waitMs = firstWaitMs;
    for (;;) {
      const age = clock.now() - job.createdAt;
      if ((last === 'pending' && age >= jobs.stuckPendingMs) || age >= jobs.maxJobAgeMs) {
        return seed === undefined ? { kind: 'stuck' } : { kind: 'stuck', seed };
      }
      if (waitMs > 0) await this.#sleep(waitMs, opts.signal, context);
      const p = await this.pollJob(job.jobId, job.jobToken, opts);
      if (p.seed !== undefined) seed = p.seed;
      if (p.status !== last) {
        const e: NarrateProgress = { state: p.status, jobId: job.jobId, attempt };
        if (p.seed !== undefined) e.seed = p.seed;
        if (p.code !== undefined) e.code = p.code;
        opts.onProgress?.(e);
        last = p.status;
      }
      if (p.status === 'succeeded') {
        const result: NarrateResult = { url: p.url!, pk: p.pk!, jobId: job.jobId };
        if (p.seed !== undefined) result.seed = p.seed;
        return { kind: 'succeeded', result };
      }
      if (p.status === 'failed') {
        // The service gives a failed job's characters back (README "Characters are money").
        opts.billing?.onEvent?.({ kind: 'job_refunded', jobId: job.jobId });
        const ctx: TtsErrorContext = { ...context, status: 200 };
        if (p.serviceCode !== undefined) ctx.serviceCode = this.#scrub(p.serviceCode, job.jobToken);
        if (p.error !== undefined) ctx.serviceMessage = this.#scrub(p.error, job.jobToken);
        const code = p.code ?? 'unknown';
        const message = code === 'unknown' ? `The job failed with an unknown code: ${ctx.serviceCode ?? '(none)'}` : undefined;
        const error = new TtsJobFailedError(code, { ...ctx, ...(message !== undefined ? { message } : {}) });
        return seed === undefined ? { kind: 'failed', error } : { kind: 'failed', error, seed };
      }
      waitMs = Math.max(jobs.minPollMs, p.pollAfterMs ?? jobs.defaultPollMs);
    }
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export type { AdvancedRequest, Plan, StandardRequest } from './validation.ts';
export type { DownloadOptions } from './download.ts';
