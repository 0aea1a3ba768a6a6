/**
 * The emulator's HTTP plumbing: what a handler answers (`Reply`), how it is written, how a request
 * body, headers, cookies and the client IP are read. No spec behaviour lives here.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { parseJsonBody } from './validate.ts';

/** What a handler answers; written to the socket in one place so the log sees every status. */
export interface Reply {
  status: number;
  json?: unknown;
  /** A non-JSON body (HTML, XML) with its content type. */
  text?: string;
  bytes?: Buffer;
  contentType?: string;
  headers?: Record<string, string>;
  /** Send headers only (HEAD). */
  omitBody?: boolean;
  /** Goes into the request log. */
  code?: string;
}

/** One request as the endpoints see it. */
export interface RequestContext {
  req: IncomingMessage;
  method: string;
  path: string;
  /** The body as text ('' when empty). */
  raw: string;
  /** The client IP the rate limits count, or null when it cannot be told. */
  ip: string | null;
}

const SECRET_HEADERS = new Set(['token', 'x-job-token', 'cookie', 'x-csrftoken', 'authorization']);
const MAX_BODY_BYTES = 1024 * 1024;

/** Writes `reply` with its Content-Length and Content-Type. */
export function send(res: ServerResponse, reply: Reply): void {
  let body: Buffer | undefined;
  let type: string | undefined;
  if (reply.json !== undefined) {
    body = Buffer.from(JSON.stringify(reply.json));
    type = 'application/json';
  } else if (reply.text !== undefined) {
    body = Buffer.from(reply.text);
    type = reply.contentType;
  } else if (reply.bytes !== undefined) {
    body = reply.bytes;
    type = reply.contentType;
  }
  const headers: Record<string, string> = { 'Content-Length': String(body?.length ?? 0) };
  if (type) headers['Content-Type'] = type;
  res.writeHead(reply.status, { ...headers, ...reply.headers });
  res.end(reply.omitBody ? undefined : body);
}

/** The request body as text, or null when it is over MAX_BODY_BYTES. */
export async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk);
  }
  return size > MAX_BODY_BYTES ? null : Buffer.concat(chunks).toString('utf8');
}

/** One request header, repeated values joined. */
export function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/** The request's headers for the log, secrets masked as '***'. */
export function maskHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined) continue;
    out[k] = SECRET_HEADERS.has(k) ? '***' : Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** The body for the log: parsed JSON, else the raw string, null when empty. */
export function logBody(raw: string): unknown {
  if (raw === '') return null;
  const parsed = parseJsonBody(raw);
  return parsed.ok ? parsed.value : raw;
}

export function parseCookies(cookie: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

/** Constant-time string comparison for tokens and signatures. */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The socket address, or with `trustProxy` the first X-Forwarded-For entry; null if that is not an IP. */
export function clientIp(req: IncomingMessage, trustProxy: boolean): string | null {
  if (trustProxy) {
    const xff = req.headers['x-forwarded-for'];
    if (xff !== undefined) {
      const first = (Array.isArray(xff) ? xff[0] : xff)?.split(',')[0]?.trim() ?? '';
      return isIP(first) ? first : null;
    }
  }
  const address = req.socket.remoteAddress;
  return address ? address.replace(/^::ffff:/, '') : null;
}
