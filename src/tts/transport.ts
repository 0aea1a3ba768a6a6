/**
 * The TTS client's HTTP transport: Node's built-in http/https with agents of the client's own.
 *
 * Why not undici: merely importing undici 8 replaces the process-wide dispatcher slot
 * `Symbol.for('undici.globalDispatcher.1')`, which discord.js's REST client (its own undici 6)
 * sends through; undici 8 then refuses discord.js's multipart bodies, so every file upload of the
 * bot failed, depending on import order. node:http reads and writes no shared slot, and its
 * agents here are private, so nothing another library imports can change where these requests go
 * and nothing here can change where theirs go. The response keeps the small part of undici's
 * shape the callers use (statusCode, headers, body.text/dump/iteration/destroy).
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** The agents requests go through: the TTS client's own, never Node's global ones. */
export interface Dispatcher {
  http: HttpAgent;
  https: HttpsAgent;
}

/** A fresh pair of keep-alive agents. */
function createDispatcher(): Dispatcher {
  return { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
}

// One pair for every TTS client in the process that is given none (the service is one host).
let shared: Dispatcher | undefined;
function defaultDispatcher(): Dispatcher {
  shared ??= createDispatcher();
  return shared;
}

interface TransportRequest {
  method: 'GET' | 'POST';
  headers?: Record<string, string> | undefined;
  body?: string | undefined;
  dispatcher?: Dispatcher | undefined;
  signal?: AbortSignal | undefined;
  /** From sending until the response headers arrive. */
  headersTimeout?: number | undefined;
  /** Longest pause between two body chunks. */
  bodyTimeout?: number | undefined;
  /** Until the TCP (and TLS) connection is up; the request cannot have reached the server before. */
  connectTimeout?: number | undefined;
}

/** The response body: an async iterable of Buffers with undici-like helpers. */
interface ResponseBody extends AsyncIterable<Buffer> {
  text(): Promise<string>;
  /** Reads and discards the rest, so the connection can be reused. */
  dump(): Promise<void>;
  destroy(): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

interface TransportResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: ResponseBody;
}

/** Error codes of this transport's own timeouts (the callers map them to `timeout`). */
export const TIMEOUT_CODES = ['CONNECT_TIMEOUT', 'HEADERS_TIMEOUT', 'BODY_TIMEOUT'] as const;

function timeoutError(code: (typeof TIMEOUT_CODES)[number]): Error {
  return Object.assign(new Error(code.toLowerCase().replace('_', ' ')), { name: 'TransportTimeoutError', code });
}

/** Sends one request; resolves when the response headers are in. */
export function request(url: string | URL, opts: TransportRequest): Promise<TransportResponse> {
  const target = typeof url === 'string' ? new URL(url) : url;
  const secure = target.protocol === 'https:';
  if (!secure && target.protocol !== 'http:') return Promise.reject(new TypeError(`unsupported protocol ${target.protocol}`));
  const dispatcher = opts.dispatcher ?? defaultDispatcher();
  const headers: Record<string, string | number> = { ...opts.headers };
  if (opts.body !== undefined) headers['content-length'] = Buffer.byteLength(opts.body);
  return new Promise<TransportResponse>((resolve, reject) => {
    const send = secure ? httpsRequest : httpRequest;
    const req = send(target, {
      method: opts.method,
      headers,
      agent: secure ? dispatcher.https : dispatcher.http,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    let headersTimer: NodeJS.Timeout | undefined;
    let connectTimer: NodeJS.Timeout | undefined;
    const clear = () => {
      clearTimeout(headersTimer);
      clearTimeout(connectTimer);
    };
    req.once('error', (error) => {
      clear();
      reject(error);
    });
    if (opts.connectTimeout) {
      req.once('socket', (socket) => {
        // A reused keep-alive socket is already connected.
        if (!socket.connecting) return;
        connectTimer = setTimeout(() => req.destroy(timeoutError('CONNECT_TIMEOUT')), opts.connectTimeout);
        socket.once(secure ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
      });
    }
    if (opts.headersTimeout) headersTimer = setTimeout(() => req.destroy(timeoutError('HEADERS_TIMEOUT')), opts.headersTimeout);
    req.once('response', (res: IncomingMessage) => {
      clear();
      if (opts.bodyTimeout) res.setTimeout(opts.bodyTimeout, () => res.destroy(timeoutError('BODY_TIMEOUT')));
      resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: wrapBody(res) });
    });
    req.end(opts.body);
  });
}

function wrapBody(res: IncomingMessage): ResponseBody {
  return {
    [Symbol.asyncIterator]: () => res[Symbol.asyncIterator]() as AsyncIterator<Buffer>,
    async text() {
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    async dump() {
      for await (const _ of res) {
        // discard
      }
    },
    destroy: () => res.destroy(),
    on: (event, listener) => res.on(event, listener),
  };
}
