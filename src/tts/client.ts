/**
 * The TTS service client (the service's interface specification): standard speech, the advanced job
 * endpoints, the shared rate budget, and the guarded audio download. Knows nothing of Discord.
 * Every HTTP exchange is one attempt run by the retry loop (retry.ts decides every retry); answers
 * are read in responses.ts; the advanced job state machine is job-driver.ts. All waits go through
 * the injected Clock.
 */
import type { Dispatcher } from './transport.ts';
import { systemClock, type Clock } from '../util/clock.ts';
import type { LogSink } from '../util/log.ts';
import type { AttemptOutcome } from '../billing/attempts.ts';
import { DOWNLOAD_DEFAULTS, downloadAudio, type DownloadOptions } from './download.ts';
import { TtsAbortError, TtsAllowanceError, TtsInputError, TtsServiceError, isTtsError, type TtsErrorContext } from './errors.ts';
import type { HttpResponse } from './http.ts';
import { JOB_DEFAULTS, driveJob, type JobDriverDeps, type JobPolicy } from './job-driver.ts';
import type { RateLimiter } from './limiter/limiter.ts';
import { sendApi, showUrl } from './redirect.ts';
import { CreateResponse, StandardResponse, errorFromAnswer, parseJson, readPoll } from './responses.ts';
import {
  chargeOfFailure,
  RETRY_DEFAULTS,
  serviceRetryRule,
  withRetries,
  type Attempt,
  type RetryLoop,
  type RetryPolicy,
  type ServiceCall,
} from './retry.ts';
import type { CallOptions, CreatedJob, JobPoll, NarrateOptions, NarrateResult, ResumableJob, StandardResult } from './types.ts';
import {
  standardEffective,
  validateAdvanced,
  validateStandard,
  validateToken,
  type AdvancedRequest,
  type Plan,
  type StandardRequest,
} from './validation.ts';

interface TtsClientOptions {
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
  logger: LogSink;
  retry: RetryPolicy;
  jobs: JobPolicy;
  /** Every HTTP exchange with the API: its HTTP status, or undefined when no answer came (metrics). */
  onExchange: (call: ServiceCall, status: number | undefined) => void;
}

/** Constructor input: the token is required, everything else falls back to DEFAULTS. */
export type TtsClientInit = { token: string } & Partial<Omit<TtsClientOptions, 'token' | 'download' | 'retry' | 'jobs'>> & {
    download?: Partial<DownloadOptions>;
    retry?: Partial<RetryPolicy>;
    jobs?: Partial<JobPolicy>;
  };

/** A limiter that always grants: the default when the caller has no shared budget. */
const NO_LIMIT: RateLimiter = { acquire: async () => {}, block: () => {} };

const SILENT: LogSink = { debug() {}, info() {}, warn() {}, error() {} };

/** Defaults merged under the constructor's options (nested `download`, `retry`, `jobs` field by field). */
const DEFAULTS = {
  baseUrl: 'https://ondoku3.com',
  plan: 'free',
  limiter: NO_LIMIT,
  clock: systemClock,
  dispatcher: undefined,
  requestTimeoutMs: 30_000,
  download: DOWNLOAD_DEFAULTS,
  logger: SILENT,
  retry: RETRY_DEFAULTS,
  jobs: JOB_DEFAULTS,
  onExchange: () => {},
} as const satisfies Omit<TtsClientOptions, 'token'>;

/** One HTTP request to the API, before the per-attempt parts are added. */
interface ApiRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** The job token, when the request carries one: it is scrubbed from service text too. */
  jobToken?: string;
  /** Which statuses are a success (polls: only 200). */
  success: (status: number) => boolean;
}

const is2xx = (status: number) => status >= 200 && status < 300;

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
    const { value: res, attempts } = await this.#call('standard', '/text_to_speech_api/', JSON.stringify(v.value), opts);
    const billed = (outcome: AttemptOutcome, pk?: number) =>
      opts.billing?.onEvent?.({ kind: 'attempt', endpoint: 'standard', attempt: attempts, outcome, pk });
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
    // to the configured service. Polls are outside the 30/10 creation budget: no limiter.
    const request: ApiRequest = {
      method: 'GET',
      url: `${this.options.baseUrl}/api/advanced-tts/jobs/${encodeURIComponent(jobId)}/`,
      headers: { 'x-job-token': jobToken, accept: 'application/json' },
      jobToken,
      success: (status) => status === 200,
    };
    const { value: res, attempts } = await withRetries(this.#loop('poll', context, opts), (attempts) =>
      this.#attempt('poll', request, opts.signal, { ...context, attempts }),
    );
    return readPoll(res, { ...context, attempts });
  }

  /** Runs an advanced job to its end: create, poll, resubmit on transient failure or a stuck job. */
  async narrate(req: AdvancedRequest, opts: NarrateOptions = {}): Promise<NarrateResult> {
    const v = validateAdvanced(req, this.options.plan);
    if (!v.ok) throw new TtsInputError({ issues: v.issues, endpoint: 'advanced' });
    this.#checkToken('advanced');
    return driveJob(this.#driver(), v.value, undefined, opts);
  }

  /** Continues a job created earlier (e.g. before a restart) with the same rules as `narrate`. */
  async resumeJob(job: ResumableJob, opts: NarrateOptions = {}): Promise<NarrateResult> {
    const v = validateAdvanced(job.request, this.options.plan);
    if (!v.ok) throw new TtsInputError({ issues: v.issues, endpoint: 'advanced', jobId: job.jobId });
    this.#checkToken('advanced');
    return driveJob(this.#driver(), v.value, { ...job, request: v.value }, opts);
  }

  /** Downloads audio from a URL the service returned, under the download guard. */
  async download(url: string, opts: { signal?: AbortSignal } = {}): Promise<Buffer> {
    return downloadAudio(url, this.options.download, {
      dispatcher: this.options.dispatcher,
      clock: this.options.clock,
      signal: opts.signal,
    });
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

  #driver(): JobDriverDeps {
    const { clock, jobs, logger } = this.options;
    return {
      clock,
      policy: jobs,
      logger,
      create: (request, opts) => this.#createJob(request, opts),
      poll: (jobId, jobToken, opts) => this.pollJob(jobId, jobToken, opts),
      scrub: (text, jobToken) => this.#scrub(text, jobToken),
    };
  }

  async #createJob(value: AdvancedRequest, opts: CallOptions): Promise<CreatedJob> {
    const { value: res, attempts } = await this.#call('advanced', '/api/advanced-tts/', JSON.stringify(value), opts);
    const body = CreateResponse.safeParse(parseJson(res.text));
    if (!body.success) {
      opts.billing?.onEvent?.({ kind: 'attempt', endpoint: 'advanced', attempt: attempts, outcome: 'maybe_charged' });
      throw new TtsServiceError('bad_response', { endpoint: 'advanced', status: res.status, attempts });
    }
    const d = body.data;
    // Charged at creation (docs/operating.md, "Characters are money"); refunded only if the job fails.
    opts.billing?.onEvent?.({ kind: 'attempt', endpoint: 'advanced', attempt: attempts, outcome: 'charged', jobId: d.job_id });
    // poll_url is not used: polls are built from the job id, so the job token only goes to TTS_BASE_URL.
    const job: CreatedJob = { jobId: d.job_id, jobToken: d.job_token, status: d.status, minPollAfterMs: d.min_poll_after_ms };
    this.options.logger.debug({ endpoint: 'advanced', jobId: job.jobId, attempts }, 'tts job created');
    return job;
  }

  /**
   * A request to an endpoint that charges (standard speech, job creation), under the retry loop;
   * resolves with the 2xx answer. Each attempt first takes the rate budget and tells the billing
   * hooks; every attempt that fails reports what it may have cost (the caller reports a 2xx).
   */
  async #call(
    call: 'standard' | 'advanced',
    path: string,
    body: string,
    opts: CallOptions,
  ): Promise<{ value: HttpResponse; attempts: number }> {
    const request: ApiRequest = {
      method: 'POST',
      url: this.options.baseUrl + path,
      headers: { 'content-type': 'application/json', accept: 'application/json', token: this.#token },
      body,
      success: is2xx,
    };
    // A 429 tells the shared budget first, so other callers hold off too.
    const loop = { ...this.#loop(call, { endpoint: call }, opts), onRateLimited: (ms: number) => this.options.limiter.block(call, ms) };
    return withRetries(loop, async (attempts) => {
      const context: TtsErrorContext = { endpoint: call, attempts };
      await this.#acquire(call, opts, context);
      await opts.billing?.beforeSend?.({ endpoint: call, attempt: attempts });
      if (opts.signal?.aborted) throw new TtsAbortError(context); // nothing left this host
      this.options.logger.debug({ endpoint: call, attempts }, 'tts request');
      const result = await this.#attempt(call, request, opts.signal, context);
      if (!result.ok) opts.billing?.onEvent?.({ kind: 'attempt', endpoint: call, attempt: attempts, outcome: chargeOfFailure(result) });
      return result;
    });
  }

  /** The retry loop's settings for one call: the spec's rule, the clock, a log line per retry. */
  #loop(call: ServiceCall, context: TtsErrorContext, opts: CallOptions): RetryLoop {
    return {
      rule: serviceRetryRule(call, this.options.retry),
      clock: this.options.clock,
      signal: opts.signal,
      context,
      onRetry: ({ error, answered }, _retry, attempts) => {
        if (!answered) this.options.logger.warn({ endpoint: call, attempts, code: error.code }, 'tts network failure, retrying');
      },
    };
  }

  /** One HTTP exchange: the success, or the typed error of what failed (an answer or the exchange itself). */
  async #attempt(
    call: ServiceCall,
    request: ApiRequest,
    signal: AbortSignal | undefined,
    context: TtsErrorContext,
  ): Promise<Attempt<HttpResponse>> {
    let res: HttpResponse;
    try {
      res = await sendApi(request.url, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        dispatcher: this.options.dispatcher,
        timeoutMs: this.options.requestTimeoutMs,
        signal,
        context,
        ...this.#redirectOptions(call, request.jobToken),
      });
    } catch (err) {
      if (!isTtsError(err)) throw err;
      this.options.onExchange(call, undefined);
      return { ok: false, error: err, answered: false };
    }
    this.options.onExchange(call, res.status);
    if (request.success(res.status)) return { ok: true, value: res };
    const error = errorFromAnswer(call, res, context, {
      scrub: (s) => this.#scrub(s, request.jobToken),
      now: this.options.clock.now(),
      policy: this.options.retry,
    });
    this.options.logger.warn({ endpoint: call, status: res.status, attempts: context.attempts, code: error.code }, 'tts request failed');
    return { ok: false, error, answered: true };
  }

  /** Redirect handling for sendApi: messages scrubbed of secrets, followed hops logged for the operator. */
  #redirectOptions(call: ServiceCall, jobToken?: string) {
    return {
      baseUrl: this.options.baseUrl,
      scrub: (s: string) => this.#scrub(s, jobToken),
      onRedirect: (status: number, to: URL) => {
        this.options.logger.warn(
          { endpoint: call, status, location: this.#scrub(showUrl(to), jobToken) },
          'tts request redirected; point TTS_BASE_URL at the new address',
        );
      },
    };
  }

  /** Service text is echoed into errors; make sure no secret rides along. */
  #scrub(s: string, jobToken?: string): string {
    let out = s.split(this.#token).join('[redacted]');
    if (jobToken) out = out.split(jobToken).join('[redacted]');
    return out;
  }

  async #acquire(call: 'standard' | 'advanced', opts: CallOptions, context: TtsErrorContext): Promise<void> {
    if (opts.signal?.aborted) throw new TtsAbortError(context);
    try {
      await this.options.limiter.acquire(call, {
        key: opts.key,
        signal: opts.signal,
        grant: opts.grant,
      });
    } catch (err) {
      if (opts.signal?.aborted) throw new TtsAbortError(context);
      throw err;
    }
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
