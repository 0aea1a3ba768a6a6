import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { DashboardConfig } from '../config.ts';
import { describeFailure } from '../discord/delivery/outcomes.ts';
import { langOf, t, textsUnder, type Lang, type MessageKey } from '../i18n/texts.ts';
import { listen } from '../util/listen.ts';
import type { Logger } from '../util/log.ts';
import { handleApi, type ApiDeps } from './api.ts';
import { ApiRefusal, DashboardError } from './errors.ts';
import { cookie, cookies, readJson, redirect, send } from './http.ts';
import { DiscordOAuth, oauthEndpoints } from './oauth.ts';
import { Sessions, type SessionOptions } from './sessions.ts';

// The web dashboard's server (DASHBOARD_PORT): the page, Discord sign-in (authorization code with
// state and PKCE), the session cookie, and the JSON API behind it (api.ts). Bound to 127.0.0.1
// unless DASHBOARD_HOST says otherwise; DASHBOARD_URL is its public address behind a proxy.

const SESSION_COOKIE = 'ydash_session';
const LOGIN_COOKIE = 'ydash_login';
/** Largest request body: a dictionary file of 1 MB as JSON text, with room for escaping. */
const MAX_BODY = 3 * 1024 * 1024;
/** What is still read (and dropped) of a body refused as too large, so that its sender gets the answer. */
const DISCARD_MAX = 10 * MAX_BODY;
const PAGE_DIR = join(import.meta.dirname, 'page');
const PAGE_FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/dom.js': { file: 'dom.js', type: 'text/javascript; charset=utf-8' },
  '/dictionary.js': { file: 'dictionary.js', type: 'text/javascript; charset=utf-8' },
  '/reports.js': { file: 'reports.js', type: 'text/javascript; charset=utf-8' },
  '/server-cards.js': { file: 'server-cards.js', type: 'text/javascript; charset=utf-8' },
  '/voice-cards.js': { file: 'voice-cards.js', type: 'text/javascript; charset=utf-8' },
  '/filters.js': { file: 'filters.js', type: 'text/javascript; charset=utf-8' },
  '/shared-dictionaries.js': { file: 'shared-dictionaries.js', type: 'text/javascript; charset=utf-8' },
  '/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
};

interface DashboardOptions {
  config: DashboardConfig;
  /** DISCORD_API_URL (the local Discord's, in tests and the playground). */
  discordApiUrl: string | undefined;
  /** The application's id when DISCORD_CLIENT_ID is unset (the bot's own, known once it is logged in). */
  applicationId: () => string | undefined;
  deps: Omit<ApiDeps, 'oauth'>;
  logger: Logger;
  /** Session lifetimes and the sign-in rate limit (tests shorten them). */
  sessions?: Partial<SessionOptions>;
}

export interface DashboardServer {
  /** Its public address (DASHBOARD_URL, else where it listens). */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** Starts the dashboard; rejects when its port cannot be bound. */
export async function startDashboard(options: DashboardOptions): Promise<DashboardServer> {
  const { config, logger } = options;
  let publicUrl = config.publicUrl ?? '';
  const sessions = new Sessions(options.sessions);
  const oauth = new DiscordOAuth({
    endpoints: oauthEndpoints(options.discordApiUrl),
    clientId: () => config.clientId ?? options.applicationId() ?? '',
    clientSecret: config.clientSecret,
    redirectUri: () => `${publicUrl}/auth/callback`,
  });
  const deps: ApiDeps = { ...options.deps, oauth };
  const pages = Object.fromEntries(
    Object.entries(PAGE_FILES).map(([path, p]) => [path, { ...p, body: readFileSync(join(PAGE_DIR, p.file)) }]),
  );
  const texts = JSON.stringify({ ja: textsUnder('ja', 'dashboard.'), en: textsUnder('en', 'dashboard.') });
  const secure = () => publicUrl.startsWith('https:');

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://dashboard.invalid');
    const method = req.method ?? 'GET';
    const jar = cookies(req);
    const lang = requestLang(req);
    const page = PAGE_FILES[url.pathname] && pages[url.pathname];
    if (method === 'GET' && page) return send(res, 200, page.body, { 'content-type': page.type, 'cache-control': 'no-cache' });
    if (method === 'GET' && url.pathname === '/texts.json')
      return send(res, 200, texts, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache' });

    if (method === 'GET' && url.pathname === '/auth/login') {
      const allowed = sessions.allowLogin(clientAddress(req));
      if (!allowed.ok) {
        logger.warn({ retryAfterS: allowed.retryAfterS }, 'dashboard sign-in rate limited');
        return send(res, 429, t(lang, 'dashboard.error_rate_limited'), {
          'retry-after': String(allowed.retryAfterS),
          'content-type': 'text/plain; charset=utf-8',
        });
      }
      const login = sessions.beginLogin();
      const bound = cookie(LOGIN_COOKIE, login.state, { maxAgeS: sessions.loginMs / 1000, secure: secure(), path: '/auth' });
      return redirect(res, oauth.authorizeUrl(login.state, login.challenge), { 'set-cookie': bound });
    }
    if (method === 'GET' && url.pathname === '/auth/callback') {
      const clearLogin = cookie(LOGIN_COOKIE, '', { maxAgeS: 0, secure: secure(), path: '/auth' });
      const login = sessions.takeLogin(url.searchParams.get('state') ?? '', jar.get(LOGIN_COOKIE));
      const code = url.searchParams.get('code');
      if (!login || !code)
        return redirect(res, `/?signin=${url.searchParams.get('error') ? 'denied' : 'expired'}`, { 'set-cookie': clearLogin });
      let token: Awaited<ReturnType<DiscordOAuth['exchange']>>;
      let user: Awaited<ReturnType<DiscordOAuth['user']>>;
      try {
        token = await oauth.exchange(code, login.verifier);
        user = await oauth.user(token.accessToken);
      } catch (error) {
        // Discord refused the code or did not answer: the browser is sent back to sign in again.
        logger.warn({ err: error }, 'dashboard sign-in failed at Discord');
        return redirect(res, '/?signin=failed', { 'set-cookie': clearLogin });
      }
      const session = sessions.create(user, token.accessToken, jar.get(SESSION_COOKIE));
      logger.info({ userId: user.id }, 'dashboard sign-in');
      const maxAgeS = Math.min(sessions.sessionMs / 1000, token.expiresInS);
      return redirect(res, '/', { 'set-cookie': [clearLogin, cookie(SESSION_COOKIE, session.id, { maxAgeS, secure: secure() })] });
    }

    const isApi = url.pathname.startsWith('/api/');
    if (!isApi && url.pathname !== '/auth/logout')
      return send(res, 404, { error: 'not_found', message: t(lang, 'dashboard.error_not_found') });
    if (jar.malformed.includes(SESSION_COOKIE)) {
      // Not one this dashboard wrote: no session, and the browser is told to forget it (it signs in again).
      logger.info({ path: url.pathname }, 'dashboard session cookie malformed: treated as signed out');
      return refuse(res, lang, 401, 'no_session', { 'set-cookie': cookie(SESSION_COOKIE, '', { maxAgeS: 0, secure: secure() }) });
    }
    const session = sessions.get(jar.get(SESSION_COOKIE));
    if (!session) return refuse(res, lang, 401, 'no_session');
    // Each session's own pace: a script looping over the API is held back before it costs anything.
    const allowed = sessions.allowRequest(session);
    if (!allowed.ok) {
      if (allowed.first) logger.warn({ userId: session.userId, retryAfterS: allowed.retryAfterS }, 'dashboard session rate limited');
      return refuse(res, lang, 429, 'too_many_requests', { 'retry-after': String(allowed.retryAfterS) });
    }
    const changes = method !== 'GET' && method !== 'HEAD';
    // A change carries the session's CSRF token (the page reads it from /api/session) and, when
    // the browser says where it comes from, this dashboard's own origin.
    if (changes) {
      const origin = req.headers.origin;
      const header = req.headers['x-csrf-token'];
      if (
        (origin !== undefined && origin !== new URL(publicUrl).origin) ||
        !sessions.csrfMatches(session, typeof header === 'string' ? header : undefined)
      ) {
        logger.warn({ userId: session.userId, path: url.pathname }, 'dashboard change refused: CSRF token or origin missing or wrong');
        return refuse(res, lang, 403, 'csrf');
      }
    }
    if (url.pathname === '/auth/logout' && method === 'POST') {
      sessions.end(session.id);
      await oauth.revoke(session.accessToken).catch((error: unknown) => logger.warn({ err: error }, 'could not revoke a dashboard token'));
      logger.info({ userId: session.userId }, 'dashboard sign-out');
      return send(res, 204, '', { 'set-cookie': cookie(SESSION_COOKIE, '', { maxAgeS: 0, secure: secure() }) });
    }
    if (!isApi) return refuse(res, lang, 404, 'not_found');
    const body = changes ? await readJson(req, MAX_BODY) : {};
    const segments = url.pathname.slice('/api/'.length).split('/').filter(Boolean).map(safeDecode);
    let result: Awaited<ReturnType<typeof handleApi>>;
    try {
      result = await handleApi(deps, { method, segments, query: url.searchParams, body, session, lang });
    } catch (error) {
      // Discord no longer takes the session's token (the member removed the app): the session ends
      // with it, so neither the page nor a script asks Discord with it again.
      if (error instanceof DashboardError && error.code === 'oauth_rejected') sessions.end(session.id);
      throw error;
    }
    if (result.file)
      return send(res, result.status, Buffer.isBuffer(result.body) ? result.body : String(result.body), {
        'content-type': result.file.type,
        'content-disposition': `attachment; filename="${result.file.name}"`,
      });
    return send(res, result.status, result.body);
  }

  const server = createServer((req, res) => {
    handle(req, res)
      .catch((error: unknown) => {
        // The browser went away before its whole body arrived (tab closed, network lost): nobody to answer, nothing wrong here.
        if (res.headersSent || (req.socket.destroyed && !req.complete)) return void res.destroy();
        const lang = requestLang(req);
        if (error instanceof ApiRefusal) return refuse(res, lang, error.status, error.code);
        if (error instanceof DashboardError) {
          if (error.code === 'body_too_large') {
            // Answered at once, and the connection kept open: a browser reads the answer once it
            // has sent its whole body, and a socket closed under its upload fails the request with
            // no answer at all. The rest is read and dropped, up to a bound past which it is cut.
            discardRest(req, DISCARD_MAX);
            return refuse(res, lang, 413, 'too_large');
          }
          if (error.code === 'body_invalid') return refuse(res, lang, 400, 'bad_request');
          logger.warn({ err: error }, 'dashboard: Discord OAuth2 failed');
          if (error.code === 'oauth_rejected') return refuse(res, lang, 401, 'no_session');
          return refuse(res, lang, 502, 'discord_unavailable');
        }
        const message = describeFailure(lang, error);
        if (message !== null) return send(res, 400, { error: 'refused', message });
        logger.error({ err: error, path: req.url?.split('?')[0] }, 'dashboard request failed');
        return refuse(res, lang, 500, 'internal');
      })
      .catch(() => {
        // Answering failed too (the connection is gone): nothing left to tell anyone.
        res.destroy();
      });
  });
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = 15_000;
  server.requestTimeout = 30_000;
  const { port, url } = await listen(server, config.port, config.host);
  publicUrl ||= url;
  logger.info({ url: publicUrl, redirectUri: `${publicUrl}/auth/callback` }, 'dashboard listening');
  return {
    url: publicUrl,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Who starts a sign-in, for its rate limit: the peer, or behind a reverse proxy on this machine
 * (the peer is loopback) the address it appended last to X-Forwarded-For.
 */
function clientAddress(req: IncomingMessage): string {
  const peer = req.socket.remoteAddress ?? 'unknown';
  const forwarded = req.headers['x-forwarded-for'];
  const loopback = peer === '::1' || peer.startsWith('127.') || peer.startsWith('::ffff:127.');
  if (!loopback || typeof forwarded !== 'string') return peer;
  return forwarded.split(',').at(-1)?.trim() || peer;
}

/** Reads and drops what is left of a request's body; past `limit` more bytes, the connection is cut. */
function discardRest(req: IncomingMessage, limit: number): void {
  let dropped = 0;
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > limit) req.socket.destroy();
  });
  req.resume();
}

/** A path segment decoded; a malformed escape stays as it is (and matches no route). */
function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The page's language: its X-Lang header (the member's choice), else the browser's Accept-Language. */
function requestLang(req: IncomingMessage): Lang {
  const chosen = req.headers['x-lang'];
  if (chosen === 'ja' || chosen === 'en') return chosen;
  return langOf(req.headers['accept-language']?.split(',')[0]?.trim());
}

/** A refusal with a stable code and its text in the member's language. */
function refuse(res: ServerResponse, lang: Lang, status: number, code: string, headers: Record<string, string> = {}): void {
  send(res, status, { error: code, message: t(lang, `dashboard.error_${code}` as MessageKey) }, headers);
}
