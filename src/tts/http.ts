/**
 * One HTTP exchange with the service, with a timeout and the caller's AbortSignal, turning every
 * low-level failure into a TtsError. Internal to src/tts. Transport errors are never passed on: their
 * `cause` chains can carry request options (headers, hence the token); only name/code are copied.
 */
import { request, TIMEOUT_CODES, type Dispatcher } from './transport.ts';
import { TtsAbortError, TtsNetworkError, isTtsError, type TtsErrorContext } from './errors.ts';

export interface SendOptions {
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  dispatcher?: Dispatcher | undefined;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  context: TtsErrorContext;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** Header value as one string (first value when repeated). */
export function header(h: HttpResponse['headers'], name: string): string | undefined {
  const v = h[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/** Copies what is safe to keep from a low-level error. */
export function causeInfo(err: unknown): { name: string; code?: string } {
  if (typeof err === 'object' && err !== null) {
    const e = err as { name?: unknown; code?: unknown };
    const info: { name: string; code?: string } = { name: typeof e.name === 'string' ? e.name : 'Error' };
    if (typeof e.code === 'string') info.code = e.code;
    return info;
  }
  return { name: typeof err };
}

/**
 * Runs `fn` with a signal that aborts on the caller's signal or after `timeoutMs` (real time: this
 * bounds a stalled socket, it is not a wait the injected clock should shorten).
 */
export async function withDeadline<T>(
  timeoutMs: number,
  signal: AbortSignal | undefined,
  context: TtsErrorContext,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  if (signal?.aborted) throw new TtsAbortError(context);
  const ac = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ac.abort(new Error('deadline'));
  }, timeoutMs);
  const onAbort = () => ac.abort(new Error('aborted'));
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await fn(ac.signal);
  } catch (err) {
    if (signal?.aborted) throw new TtsAbortError(context);
    if (timedOut) throw new TtsNetworkError('timeout', context);
    if (isTtsError(err)) throw err;
    const info = causeInfo(err);
    const timeout = info.code !== undefined && (TIMEOUT_CODES as readonly string[]).includes(info.code);
    throw new TtsNetworkError(timeout ? 'timeout' : 'network', { ...context, causeInfo: info });
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/** Sends one request and reads the whole (small, JSON) body. */
export async function send(url: string, opts: SendOptions): Promise<HttpResponse> {
  return withDeadline(opts.timeoutMs, opts.signal, opts.context, async (signal) => {
    const res = await request(url, {
      method: opts.method,
      headers: opts.headers,
      body: opts.body,
      dispatcher: opts.dispatcher,
      signal,
      headersTimeout: opts.timeoutMs,
      // Told apart from a later timeout: a creation that never connected may be retried (client.ts).
      connectTimeout: Math.min(10_000, opts.timeoutMs),
      bodyTimeout: opts.timeoutMs,
    });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, text };
  });
}
