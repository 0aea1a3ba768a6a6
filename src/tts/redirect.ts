/**
 * Redirects on API calls (standard speech, job creation, polling). The client always calls the
 * spec's paths under TTS_BASE_URL; a redirect means the deployment answers somewhere else (the
 * service's own client posts to `/ja/text_to_speech_api/`, for instance). Only a 307/308 to the
 * same origin is followed, since only those keep the method and body (RFC 9110 section 15.4); a 301/302/303
 * would turn the POST into a GET, and another host would receive the token. Everything else fails
 * with a message naming the Location and TTS_BASE_URL. Audio downloads have their own rules
 * (download.ts).
 */
import { TtsServiceError, type TtsErrorContext } from './errors.ts';
import { header, send, type HttpResponse, type SendOptions } from './http.ts';

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const METHOD_KEEPING = new Set([307, 308]);

/** Same-origin 307/308 hops followed per call at most. */
const MAX_API_REDIRECTS = 3;

/** A URL as it may appear in a message: no credentials, no query (a signed URL's), no fragment. */
export function showUrl(url: URL): string {
  return `${url.origin}${url.pathname}${url.search ? '?…' : ''}`;
}

/** Verdict on one redirect answer: follow `to`, or refuse with a message. */
type RedirectVerdict = { follow: URL } | { refuse: string };

/**
 * What to do with a redirect answer (`status`, `location`) to a request for `from`; `base` is the
 * configured TTS_BASE_URL. Pure, so every rule is tested as a table.
 */
export function judgeRedirect(method: string, from: URL, status: number, location: string | undefined, base: URL): RedirectVerdict {
  const what = `${method} ${from.pathname}`;
  const now = `(now ${showBase(base)})`;
  if (!location) return { refuse: `The service answered ${what} with HTTP ${status} and no Location. Check TTS_BASE_URL ${now}.` };
  let to: URL;
  try {
    to = new URL(location, from);
  } catch {
    return { refuse: `The service answered ${what} with HTTP ${status} and an invalid Location. Check TTS_BASE_URL ${now}.` };
  }
  const moved = `The service redirected ${what} to ${showUrl(to)} (HTTP ${status}).`;
  if (to.origin !== from.origin) {
    // An http -> https upgrade of the same host is another origin too: the setting is what to fix.
    return {
      refuse: `${moved} Not followed: the token is only sent to TTS_BASE_URL's own host and scheme. Set TTS_BASE_URL to the service's address ${now}.`,
    };
  }
  if (to.username || to.password) return { refuse: `${moved} Not followed: the Location carries credentials. Check TTS_BASE_URL ${now}.` };
  if (!METHOD_KEEPING.has(status)) {
    const fix = suggestBase(from, to, base) ?? 'Check TTS_BASE_URL';
    return { refuse: `${moved} Not followed: only a 307 or 308 keeps the ${method} and its body. ${fix} ${now}.` };
  }
  return { follow: to };
}

/** TTS_BASE_URL as shown in messages. */
function showBase(base: URL): string {
  return showUrl(base).replace(/\/$/, '');
}

/**
 * When the redirect moved the whole base (e.g. `/text_to_speech_api/` to `/ja/text_to_speech_api/`),
 * the TTS_BASE_URL that calls the new place directly.
 */
function suggestBase(from: URL, to: URL, base: URL): string | undefined {
  const basePath = base.pathname.replace(/\/+$/, '');
  if (!from.pathname.startsWith(`${basePath}/`)) return undefined;
  const endpoint = from.pathname.slice(basePath.length);
  if (!to.pathname.endsWith(endpoint) || to.search) return undefined;
  const suggested = `${to.origin}${to.pathname.slice(0, -endpoint.length)}`;
  return suggested === showBase(base) ? undefined : `Set TTS_BASE_URL to ${suggested}`;
}

interface ApiSendOptions extends SendOptions {
  /** The configured TTS_BASE_URL, named in messages. */
  baseUrl: string;
  /** Removes secrets from text that came from the service (the Location). */
  scrub: (s: string) => string;
  /** Told about each redirect followed, so the operator can point TTS_BASE_URL at the new place. */
  onRedirect?: ((status: number, to: URL) => void) | undefined;
}

/**
 * `send`, following a same-origin 307/308 with the same method, headers and body; any other
 * redirect is a TtsServiceError `redirect_refused` carrying the 3xx status.
 */
export async function sendApi(url: string, opts: ApiSendOptions): Promise<HttpResponse> {
  const { baseUrl, scrub, onRedirect, ...sendOpts } = opts;
  const base = new URL(baseUrl);
  let current = new URL(url);
  for (let hop = 0; ; hop++) {
    const res = await send(current.href, sendOpts);
    if (!REDIRECTS.has(res.status)) return res;
    const context: TtsErrorContext = { ...opts.context, status: res.status };
    const verdict = judgeRedirect(opts.method, current, res.status, header(res.headers, 'location'), base);
    if ('refuse' in verdict) throw new TtsServiceError('redirect_refused', { ...context, message: scrub(verdict.refuse) });
    if (hop >= MAX_API_REDIRECTS) {
      const message = `The service redirected ${opts.method} ${new URL(url).pathname} more than ${MAX_API_REDIRECTS} times (last to ${showUrl(verdict.follow)}). Check TTS_BASE_URL (now ${showBase(base)}).`;
      throw new TtsServiceError('redirect_refused', { ...context, message: scrub(message) });
    }
    onRedirect?.(res.status, verdict.follow);
    current = verdict.follow;
  }
}
