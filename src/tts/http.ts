/**
 * One HTTP exchange with the service, with a timeout and the caller's AbortSignal, turning every
 * low-level failure into a TtsError. Internal to src/tts. Transport errors are never passed on: their
 * `cause` chains can carry request options (headers, hence the token); only name/code are copied.
 */
import { request, TIMEOUT_CODES, type Dispatcher } from './transport.ts';
import { TtsAbortError, TtsNetworkError, TtsServiceError, isTtsError, type TtsErrorContext } from './errors.ts';

/**
 * Largest response body read from the service's JSON endpoints. The biggest legitimate one echoes
 * the request's text (a few KB); like the audio download, a body past the cap is refused while
 * streaming, so a broken or hostile server cannot make the bot buffer without bound.
 */
export const MAX_JSON_BYTES = 1024 * 1024;

export interface SendOptions {
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string | undefined;
  dispatcher?: Dispatcher | undefined;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  context: TtsErrorContext;
  /** Refuse a response body larger than this (default MAX_JSON_BYTES). */
  maxBytes?: number;
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

/** Sends one request and reads the whole (small, JSON) body, at most `maxBytes` of it. */
export async function send(url: string, opts: SendOptions): Promise<HttpResponse> {
  const maxBytes = opts.maxBytes ?? MAX_JSON_BYTES;
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
    const tooLarge = () => {
      // Stop reading; the destroy is reported as an error nobody needs to see.
      res.body.on('error', () => {});
      res.body.destroy();
      return new TtsServiceError('bad_response', {
        ...opts.context,
        status: res.statusCode,
        message: `the response body is larger than ${maxBytes} bytes`,
      });
    };
    const declared = Number(header(res.headers, 'content-length'));
    if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge();
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of res.body) {
      total += (chunk as Buffer).length;
      // Enforced while streaming: a missing or lying Content-Length does not get past the cap.
      if (total > maxBytes) throw tooLarge();
      chunks.push(chunk as Buffer);
    }
    return { status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') };
  });
}
