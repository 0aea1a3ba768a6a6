/**
 * OAuth2 grants for users (https://discord.com/developers/docs/topics/oauth2#authorization-code-grant):
 * authorization codes (one use, 10 minutes, bound to their redirect URI and PKCE challenge), the
 * token endpoint (`authorization_code` and `refresh_token`, the client secret in the body or Basic
 * auth, form-encoded only), revocation (RFC 7009: unknown tokens answer 200 too), and the Bearer
 * routes a web dashboard uses: `users/@me`, `users/@me/guilds` and `oauth2/@me`.
 *
 * Errors have RFC 6749's shape, as Discord answers them: `{ error, error_description }` with 400
 * (invalid_request, invalid_grant, unsupported_grant_type) or 401 (invalid_client). A Bearer token
 * that is unknown, expired or revoked gets Discord's `401: Unauthorized`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { API_ERRORS } from '../errors.ts';
import { memberPermissions, randomToken, toAPIUser, type FakeGuild } from '../fixtures.ts';
import type { RouteResult } from '../rest/router.ts';
import type { DiscordState } from '../state.ts';
import type { FakeBot } from '../types.ts';

/** The scopes the local Discord grants to users. */
export const USER_SCOPES = ['identify', 'email', 'guilds', 'guilds.members.read', 'applications.commands'] as const;

const CODE_LIFETIME_MS = 10 * 60_000;

interface CodeGrant {
  code: string;
  bot: FakeBot;
  userId: string;
  scopes: string[];
  /** The redirect URI the authorization request named (undefined: none was sent; the only one registered was used). */
  redirectUri: string | undefined;
  codeChallenge: string | undefined;
  issuedAt: number;
  /** The grant the code was exchanged for, once it was. */
  exchangedFor: TokenGrant | undefined;
}

interface TokenGrant {
  bot: FakeBot;
  userId: string;
  scopes: string[];
  accessToken: string;
  refreshToken: string;
  expiresAt: number;
  revoked: boolean;
}

type Form = Record<string, string>;

const oauthError = (status: number, error: string, description?: string): RouteResult => ({
  status,
  body: description === undefined ? { error } : { error, error_description: description },
});

export class OAuth2Grants {
  readonly #state: DiscordState;
  readonly #codes = new Map<string, CodeGrant>();
  readonly #byAccess = new Map<string, TokenGrant>();
  readonly #byRefresh = new Map<string, TokenGrant>();

  constructor(state: DiscordState) {
    this.#state = state;
  }

  /** A fresh authorization code for what the user approved on the consent page. */
  issueCode(grant: {
    bot: FakeBot;
    userId: string;
    scopes: string[];
    redirectUri: string | undefined;
    codeChallenge: string | undefined;
  }): string {
    const code = randomToken(24);
    this.#codes.set(code, { ...grant, code, issuedAt: this.#state.now(), exchangedFor: undefined });
    return code;
  }

  /** POST /oauth2/token. */
  token(form: Form | undefined, authorization: string | undefined): RouteResult {
    if (!form) return oauthError(400, 'invalid_request', 'Content-Type must be application/x-www-form-urlencoded');
    const bot = this.#client(form, authorization);
    if (!bot) return oauthError(401, 'invalid_client');
    if (form.grant_type === 'authorization_code') return this.#exchangeCode(bot, form);
    if (form.grant_type === 'refresh_token') return this.#refresh(bot, form);
    if (!form.grant_type) return oauthError(400, 'invalid_request', 'Missing "grant_type" in request.');
    return oauthError(400, 'unsupported_grant_type');
  }

  /** POST /oauth2/token/revoke: ends the authorization the token (access or refresh) belongs to. */
  revoke(form: Form | undefined, authorization: string | undefined): RouteResult {
    if (!form) return oauthError(400, 'invalid_request', 'Content-Type must be application/x-www-form-urlencoded');
    const bot = this.#client(form, authorization);
    if (!bot) return oauthError(401, 'invalid_client');
    if (!form.token) return oauthError(400, 'invalid_request', 'Missing "token" in request.');
    const grant = this.#byAccess.get(form.token) ?? this.#byRefresh.get(form.token);
    // A token of another client, or none at all, is not revealed (RFC 7009 section 2.2).
    if (grant && grant.bot === bot) grant.revoked = true;
    return { status: 200, body: {} };
  }

  /** The live grant an `Authorization: Bearer <token>` header names. */
  bearer(authorization: string | undefined): TokenGrant | undefined {
    if (!authorization?.startsWith('Bearer ')) return undefined;
    const grant = this.#byAccess.get(authorization.slice(7));
    if (!grant || grant.revoked || this.#state.now() >= grant.expiresAt) return undefined;
    return grant;
  }

  /** A REST request with a Bearer token: the routes a user token may call. */
  route(method: string, path: string, authorization: string, query: URLSearchParams): RouteResult {
    const grant = this.bearer(authorization);
    if (!grant) return API_ERRORS.unauthorized;
    const user = this.#state.findUser(grant.userId);
    if (!user) return API_ERRORS.unauthorized;
    const has = (scope: string) => grant.scopes.includes(scope);
    if (method === 'GET' && path === '/users/@me') {
      if (!has('identify') && !has('email')) return API_ERRORS.unauthorized;
      return {
        status: 200,
        body: { ...toAPIUser(user), locale: 'ja', mfa_enabled: false, ...(has('email') ? { email: null, verified: true } : {}) },
      };
    }
    if (method === 'GET' && path === '/users/@me/guilds') {
      if (!has('guilds')) return API_ERRORS.unauthorized;
      return { status: 200, body: this.#userGuilds(grant.userId, query) };
    }
    if (method === 'GET' && path === '/oauth2/@me') {
      return {
        status: 200,
        body: {
          application: { id: grant.bot.applicationId, name: grant.bot.user.username, icon: null, description: '', bot_public: true },
          scopes: grant.scopes,
          expires: new Date(grant.expiresAt).toISOString(),
          ...(has('identify') ? { user: toAPIUser(user) } : {}),
        },
      };
    }
    // Bot routes do not take a user's token.
    return API_ERRORS.unauthorized;
  }

  #userGuilds(userId: string, query: URLSearchParams): unknown[] {
    const limit = Math.min(200, Math.max(1, Number(query.get('limit') ?? 200) || 200));
    const after = query.get('after');
    const before = query.get('before');
    const withCounts = query.get('with_counts') === 'true';
    const isMember = (g: FakeGuild) => g.ownerId === userId || g.members.some((m) => m.user.id === userId);
    return this.#state.guilds
      .filter(isMember)
      .sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1))
      .filter((g) => (after === null || BigInt(g.id) > BigInt(after)) && (before === null || BigInt(g.id) < BigInt(before)))
      .slice(0, limit)
      .map((g) => ({
        id: g.id,
        name: g.name,
        icon: null,
        banner: null,
        owner: g.ownerId === userId,
        // Discord sends the member's guild-wide permissions as a string (a bitfield beyond 2^53).
        permissions: memberPermissions(g, userId).toString(),
        features: [],
        ...(withCounts ? { approximate_member_count: g.members.length, approximate_presence_count: 0 } : {}),
      }));
  }

  /** The application the request authenticates as: Basic auth, else client_id and client_secret in the body. */
  #client(form: Form, authorization: string | undefined): FakeBot | undefined {
    let id = form.client_id;
    let secret = form.client_secret;
    if (authorization?.startsWith('Basic ')) {
      const decoded = Buffer.from(authorization.slice(6), 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) return undefined;
      id = decodeURIComponent(decoded.slice(0, colon));
      secret = decodeURIComponent(decoded.slice(colon + 1));
    }
    if (!id || !secret) return undefined;
    const bot = this.#state.botByApplication(id);
    return bot && sameSecret(bot.clientSecret, secret) ? bot : undefined;
  }

  #exchangeCode(bot: FakeBot, form: Form): RouteResult {
    const code = form.code ? this.#codes.get(form.code) : undefined;
    if (!code || code.bot !== bot || this.#state.now() - code.issuedAt > CODE_LIFETIME_MS) {
      return oauthError(400, 'invalid_grant', 'Invalid "code" in request.');
    }
    if (code.exchangedFor) {
      // A code used twice: refuse, and end what the first use got (RFC 6749 section 4.1.2).
      code.exchangedFor.revoked = true;
      return oauthError(400, 'invalid_grant', 'Invalid "code" in request.');
    }
    const redirectUri = code.redirectUri ?? bot.redirectUris[0];
    if (form.redirect_uri !== undefined ? form.redirect_uri !== redirectUri : code.redirectUri !== undefined) {
      return oauthError(400, 'invalid_grant', 'Invalid "redirect_uri" in request.');
    }
    if (code.codeChallenge !== undefined) {
      const verifier = form.code_verifier;
      if (!verifier) return oauthError(400, 'invalid_request', 'Missing "code_verifier" in request.');
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      if (challenge !== code.codeChallenge) return oauthError(400, 'invalid_grant', 'Invalid "code_verifier" in request.');
    }
    const grant = this.#grant(bot, code.userId, code.scopes);
    code.exchangedFor = grant;
    return this.#tokenResponse(grant);
  }

  #refresh(bot: FakeBot, form: Form): RouteResult {
    const old = form.refresh_token ? this.#byRefresh.get(form.refresh_token) : undefined;
    if (!old || old.bot !== bot || old.revoked) return oauthError(400, 'invalid_grant', 'Invalid "refresh_token" in request.');
    // The old pair stops working: refresh tokens rotate.
    old.revoked = true;
    return this.#tokenResponse(this.#grant(bot, old.userId, old.scopes));
  }

  #grant(bot: FakeBot, userId: string, scopes: string[]): TokenGrant {
    const grant: TokenGrant = {
      bot,
      userId,
      scopes,
      accessToken: randomToken(24),
      refreshToken: randomToken(24),
      expiresAt: this.#state.now() + this.#state.options.accessTokenLifetimeMs,
      revoked: false,
    };
    this.#byAccess.set(grant.accessToken, grant);
    this.#byRefresh.set(grant.refreshToken, grant);
    return grant;
  }

  #tokenResponse(grant: TokenGrant): RouteResult {
    return {
      status: 200,
      body: {
        token_type: 'Bearer',
        access_token: grant.accessToken,
        expires_in: Math.round(this.#state.options.accessTokenLifetimeMs / 1000),
        refresh_token: grant.refreshToken,
        scope: grant.scopes.join(' '),
      },
    };
  }
}

function sameSecret(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
