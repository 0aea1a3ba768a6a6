import type { IncomingMessage, ServerResponse } from 'node:http';
import { DashboardError } from './errors.ts';

// The dashboard's HTTP plumbing: cookies, JSON bodies and answers, the headers every answer carries.

/** Headers on every answer: nothing framed, sniffed or sent on as a referrer (the callback's URL holds a code). */
const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'content-security-policy':
    "default-src 'self'; img-src 'self' https://cdn.discordapp.com data:; style-src 'self'; script-src 'self'; " +
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
} as const;

/**
 * The request's cookies by name. A value that is not valid percent-encoding (another site's
 * cookie on the same domain, a browser extension, a hand-edited jar) is left out and its name
 * listed in `malformed`: to the dashboard it is a cookie it did not set.
 */
export function cookies(req: IncomingMessage): Map<string, string> & { malformed: string[] } {
  const out = Object.assign(new Map<string, string>(), { malformed: [] as string[] });
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    try {
      out.set(name, decodeURIComponent(part.slice(eq + 1).trim()));
    } catch {
      out.malformed.push(name);
    }
  }
  return out;
}

/** A Set-Cookie value: HttpOnly and SameSite=Lax always, Secure on https; maxAgeS 0 deletes it. */
export function cookie(name: string, value: string, options: { maxAgeS: number; secure: boolean; path?: string }): string {
  return [
    `${name}=${encodeURIComponent(value)}`,
    `Path=${options.path ?? '/'}`,
    `Max-Age=${Math.max(0, Math.floor(options.maxAgeS))}`,
    'HttpOnly',
    'SameSite=Lax',
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');
}

/** Answers with `body` (a JSON value unless it is a string or a buffer with its own type). */
export function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string | string[]> = {}): void {
  const isRaw = typeof body === 'string' || Buffer.isBuffer(body);
  const payload = isRaw ? body : JSON.stringify(body);
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'cache-control': 'no-store',
    ...(isRaw ? {} : { 'content-type': 'application/json; charset=utf-8' }),
    ...headers,
  });
  res.end(payload);
}

/** Redirects (302) to `location`. */
export function redirect(res: ServerResponse, location: string, headers: Record<string, string | string[]> = {}): void {
  send(res, 302, '', { location, ...headers });
}

/**
 * The request's JSON object body (at most `maxBytes`), or a DashboardError. A body announced or
 * found to be larger is refused without reading the rest: the socket stays open so the answer
 * (413) reaches the browser, and what it still sends is discarded (server.ts).
 */
export async function readJson(req: IncomingMessage, maxBytes: number): Promise<Record<string, unknown>> {
  const type = req.headers['content-type'] ?? '';
  if (!type.startsWith('application/json')) throw new DashboardError('body_invalid');
  if (Number(req.headers['content-length'] ?? 0) > maxBytes) throw new DashboardError('body_too_large');
  const chunks = await new Promise<Buffer[]>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) return void chunks.push(chunk);
      // Not `for await`: leaving its loop destroys the request, and the socket the answer needs.
      req.off('data', onData);
      req.off('end', onEnd);
      reject(new DashboardError('body_too_large'));
    };
    const onEnd = () => resolve(chunks);
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', reject);
    // The browser went away before the whole body arrived (server.ts answers nobody then).
    req.once('close', () => reject(new DashboardError('body_invalid')));
  });
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (error) {
    throw new DashboardError('body_invalid', { cause: error });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new DashboardError('body_invalid');
  return value as Record<string, unknown>;
}
