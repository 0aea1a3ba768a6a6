/**
 * The audio download guard (spec: "The audio file is fetched from `url` with a plain GET"). A URL
 * from the service is still untrusted input: only listed hosts, https (plain http only on loopback
 * when the emulator is in use), redirects followed by hand with every hop checked, a size cap
 * enforced while streaming, a deadline, and the bytes must look like MP3.
 */
import { request, type Dispatcher } from './transport.ts';
import type { Clock } from '../util/clock.ts';
import { TtsDownloadError, isTtsError, type TtsErrorContext } from './errors.ts';
import { header, withDeadline } from './http.ts';
import { downloadRetryRule, withRetries, type Attempt } from './retry.ts';

export interface DownloadOptions {
  /** Host names audio may come from (exact match, case-insensitive, any port). */
  allowHosts: string[];
  /** Permit http and https on 127.0.0.1, localhost and ::1 (the emulator). */
  allowLoopback: boolean;
  /** Refuse bodies larger than this many bytes. */
  maxBytes: number;
  /** Deadline for one download attempt, redirects included. */
  timeoutMs: number;
  /** Redirect hops followed at most. */
  maxRedirects: number;
  /** Retries after a network error or 5xx, waiting 1 s, 2 s (injected clock; rule in retry.ts). */
  retries: number;
}

export const DOWNLOAD_DEFAULTS = {
  // The live service serves standard audio from this public bucket (the service's documented behaviour).
  allowHosts: ['storage.googleapis.com'],
  allowLoopback: false,
  maxBytes: 10 * 1024 * 1024,
  timeoutMs: 30_000,
  maxRedirects: 5,
  retries: 2,
} as const satisfies Required<DownloadOptions>;

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** Is `hostname` one of the loopback names the guard may permit? */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK.has(hostname.toLowerCase());
}

/** Checks one URL against the policy; returns the reason it is refused, or undefined. */
export function refuseReason(url: URL, opts: Pick<DownloadOptions, 'allowHosts' | 'allowLoopback'>): string | undefined {
  const host = url.hostname.toLowerCase();
  if (opts.allowLoopback && isLoopbackHost(host)) {
    return url.protocol === 'http:' || url.protocol === 'https:' ? undefined : `scheme ${url.protocol} is not allowed`;
  }
  if (url.protocol !== 'https:') return `scheme ${url.protocol} is not allowed (https required)`;
  if (url.username || url.password) return 'credentials in the URL are not allowed';
  if (!opts.allowHosts.some((h) => h.toLowerCase() === host)) return `host ${host} is not on the allow-list`;
  return undefined;
}

/** Do these bytes start like an MP3: an ID3v2 tag or an MPEG audio frame header? */
export function looksLikeMp3(b: Uint8Array): boolean {
  if (b.length >= 3 && b[0] === 0x49 && b[1] === 0x44 && b[2] === 0x33) return true; // "ID3"
  if (b.length < 4) return false;
  const [b0, b1, b2] = [b[0]!, b[1]!, b[2]!];
  if (b0 !== 0xff || (b1 & 0xe0) !== 0xe0) return false; // 11-bit frame sync
  const version = (b1 >> 3) & 3; // 1 = reserved
  const layer = (b1 >> 1) & 3; // 0 = reserved
  const bitrate = b2 >> 4; // 15 = bad
  const rate = (b2 >> 2) & 3; // 3 = reserved
  return version !== 1 && layer !== 0 && bitrate !== 15 && rate !== 3;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export interface DownloadDeps {
  dispatcher?: Dispatcher | undefined;
  clock: Clock;
  signal?: AbortSignal | undefined;
}

/** Downloads MP3 audio from `url` under the guard; throws TtsDownloadError on refusal or failure. */
export async function downloadAudio(url: string, opts: DownloadOptions, deps: DownloadDeps): Promise<Buffer> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TtsDownloadError('download_refused', { message: 'the audio URL is not a valid URL' });
  }
  const loop = {
    rule: downloadRetryRule(opts.retries),
    clock: deps.clock,
    signal: deps.signal,
    context: { endpoint: 'download', host: parsed.hostname },
  } as const;
  const { value } = await withRetries(loop, async (attempt): Promise<Attempt<Buffer>> => {
    try {
      return { ok: true, value: await downloadOnce(parsed, opts, deps, attempt) };
    } catch (err) {
      if (!isTtsError(err)) throw err;
      return { ok: false, error: err, answered: err.context.status !== undefined };
    }
  });
  return value;
}

async function downloadOnce(start: URL, opts: DownloadOptions, deps: DownloadDeps, attempt: number): Promise<Buffer> {
  const context: TtsErrorContext = { endpoint: 'download', host: start.hostname, attempts: attempt };
  return withDeadline(opts.timeoutMs, deps.signal, context, async (signal) => {
    let url = start;
    for (let hop = 0; ; hop++) {
      const ctx = { ...context, host: url.hostname };
      const why = refuseReason(url, opts);
      if (why) throw new TtsDownloadError('download_refused', { ...ctx, message: `audio download refused: ${why}` });
      const res = await request(url, {
        method: 'GET',
        dispatcher: deps.dispatcher,
        signal,
        headersTimeout: opts.timeoutMs,
        bodyTimeout: opts.timeoutMs,
      });
      if (REDIRECTS.has(res.statusCode)) {
        await res.body.dump();
        const location = header(res.headers, 'location');
        if (!location)
          throw new TtsDownloadError('download_failed', { ...ctx, status: res.statusCode, message: 'redirect without a Location header' });
        if (hop >= opts.maxRedirects) throw new TtsDownloadError('download_refused', { ...ctx, message: 'too many redirects' });
        url = new URL(location, url);
        continue;
      }
      if (res.statusCode < 200 || res.statusCode > 299) {
        await res.body.dump();
        throw new TtsDownloadError('download_failed', {
          ...ctx,
          status: res.statusCode,
          message: `audio download failed with HTTP ${res.statusCode}`,
        });
      }
      const declared = Number(header(res.headers, 'content-length'));
      if (Number.isFinite(declared) && declared > opts.maxBytes) {
        discard(res.body);
        throw new TtsDownloadError('download_refused', { ...ctx, message: `audio is larger than ${opts.maxBytes} bytes` });
      }
      const chunks: Buffer[] = [];
      let total = 0;
      for await (const chunk of res.body) {
        const buf = chunk as Buffer;
        total += buf.length;
        // Enforced while streaming: a missing or lying Content-Length does not get past the cap.
        if (total > opts.maxBytes) {
          discard(res.body);
          throw new TtsDownloadError('download_refused', { ...ctx, message: `audio is larger than ${opts.maxBytes} bytes` });
        }
        chunks.push(buf);
      }
      const body = Buffer.concat(chunks);
      if (!looksLikeMp3(body)) throw new TtsDownloadError('download_refused', { ...ctx, message: 'the downloaded body is not MP3 audio' });
      return body;
    }
  });
}

/** Stops reading a body we refuse; the destroy is reported as an error nobody needs to see. */
function discard(body: { on(event: 'error', fn: () => void): unknown; destroy(): unknown }): void {
  body.on('error', () => {});
  body.destroy();
}
