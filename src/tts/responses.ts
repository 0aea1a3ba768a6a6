/**
 * What the service answers, read: the response schemas of each endpoint (spec: POST
 * /text_to_speech_api/, POST /api/advanced-tts/, GET /api/advanced-tts/jobs/{job_id}/), the typed
 * error for an answer that is not a success, and a poll in our names. Service text copied into an
 * error goes through the caller's `scrub`, so no secret rides along.
 */
import { z } from 'zod';
import { TtsServiceError, advancedCodeFor, standardCodeFor, type TtsErrorContext } from './errors.ts';
import { header, type HttpResponse } from './http.ts';
import type { RetryPolicy, ServiceCall } from './retry.ts';
import type { JobPoll } from './types.ts';

const JOB_STATUS = z.enum(['pending', 'running', 'succeeded', 'failed']);

export const StandardResponse = z.object({ text: z.string(), url: z.string().min(1), pk: z.number(), share: z.number().optional() });
export const CreateResponse = z.object({
  job_id: z.string().min(1),
  job_token: z.string().min(1),
  status: JOB_STATUS,
  min_poll_after_ms: z.number().nonnegative(),
  poll_url: z.string(),
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
const StandardErrorBody = z.looseObject({ error: z.string().optional(), reset_in: z.number().optional() });
const AdvancedErrorBody = z.looseObject({
  code: z.string().optional(),
  error: z.string().optional(),
  retry_after: z.number().optional(),
  available: z.number().optional(),
  error_code: z.string().optional(),
});

/** The body as JSON, or undefined when it is not JSON. */
export function parseJson(text: string): unknown {
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

interface AnswerReading {
  /** Removes secrets from service text. */
  scrub: (s: string) => string;
  /** Clock time, for a Retry-After given as a date. */
  now: number;
  /** The floors under the wait a 429 asks for. */
  policy: Pick<RetryPolicy, 'standardMinRateWaitMs' | 'advancedMinRateWaitMs'>;
}

/** The typed error for an answer that is not a success, with the wait the service asked for (429). */
export function errorFromAnswer(call: ServiceCall, res: HttpResponse, base: TtsErrorContext, reading: AnswerReading): TtsServiceError {
  const json = parseJson(res.text);
  const context: TtsErrorContext = { ...base, status: res.status };
  if (call === 'standard') {
    const b = StandardErrorBody.safeParse(json);
    const message = b.success ? b.data.error : undefined;
    const code = standardCodeFor(res.status, message);
    if (message !== undefined) context.serviceMessage = reading.scrub(message);
    if (res.status === 429) {
      const resetIn = b.success ? b.data.reset_in : undefined;
      context.retryAfterMs = Math.max(reading.policy.standardMinRateWaitMs, (resetIn ?? 0) * 1000);
    }
    if (code !== 'unknown') return new TtsServiceError(code, context);
    return new TtsServiceError(code, {
      ...context,
      message: `The service refused the request: ${context.serviceMessage ?? `HTTP ${res.status}`}`,
    });
  }
  const b = AdvancedErrorBody.safeParse(json);
  const body = b.success ? b.data : {};
  const code = advancedCodeFor(body.code, res.status);
  if (body.code !== undefined) context.serviceCode = reading.scrub(body.code);
  if (body.error !== undefined) context.serviceMessage = reading.scrub(body.error);
  if (body.available !== undefined) context.available = body.available;
  if (res.status === 429) {
    const seconds = body.retry_after ?? retryAfterHeader(header(res.headers, 'retry-after'), reading.now) ?? 0;
    context.retryAfterMs = Math.max(reading.policy.advancedMinRateWaitMs, seconds * 1000);
  }
  if (code !== 'unknown') return new TtsServiceError(code, context);
  return new TtsServiceError(code, {
    ...context,
    message: `The service answered with an unknown code: ${context.serviceCode ?? `HTTP ${res.status}`}`,
  });
}

/** A 200 poll answer in our names; a body that does not fit (or a success without audio) is `bad_response`. */
export function readPoll(res: HttpResponse, context: TtsErrorContext): JobPoll {
  const parsed = PollResponse.safeParse(parseJson(res.text));
  if (!parsed.success || (parsed.data.status === 'succeeded' && (parsed.data.url === undefined || parsed.data.pk === undefined))) {
    throw new TtsServiceError('bad_response', { ...context, status: res.status });
  }
  const d = parsed.data;
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
