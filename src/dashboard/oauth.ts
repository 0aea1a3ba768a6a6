import { createHash, randomBytes } from 'node:crypto';
import { DashboardError } from './errors.ts';

// Discord's OAuth2 authorization code flow with PKCE (https://discord.com/developers/docs/topics/oauth2),
// as the dashboard signs members in: scopes `identify guilds`, the client secret sent only to the
// token and revoke endpoints (HTTP Basic), never logged or shown.

/** Where Discord's OAuth2 lives: the authorize page beside the API, the token endpoints under it. */
interface OAuthEndpoints {
  authorize: string;
  token: string;
  revoke: string;
  /** The API base with its version, for `users/@me` and `users/@me/guilds`. */
  api: string;
}

/** The endpoints for DISCORD_API_URL (e.g. http://127.0.0.1:3000/api for the local Discord), or Discord's own. */
export function oauthEndpoints(apiUrl: string | undefined): OAuthEndpoints {
  const base = (apiUrl ?? 'https://discord.com/api').replace(/\/+$/, '');
  const api = `${base}/v10`;
  return { authorize: `${new URL(base).origin}/oauth2/authorize`, token: `${api}/oauth2/token`, revoke: `${api}/oauth2/token/revoke`, api };
}

/** A random value for `state` or a PKCE verifier (43 URL-safe characters). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** The PKCE S256 challenge of a verifier (RFC 7636). */
export function pkceChallenge(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

interface DiscordUser {
  id: string;
  /** The name shown: the global name, else the username. */
  name: string;
  avatar: string | null;
}

export interface DiscordUserGuild {
  id: string;
  name: string;
  icon: string | null;
}

interface OAuthOptions {
  endpoints: OAuthEndpoints;
  /** The application's id (resolved once the bot knows it when DISCORD_CLIENT_ID is unset). */
  clientId: () => string;
  clientSecret: string;
  redirectUri: () => string;
  /** Deadline of each call to Discord. */
  timeoutMs?: number;
}

/** A failure with the HTTP status Discord answered (never its body: it may echo the code). */
function failed(code: DashboardError['code'], status: number, cause?: unknown): DashboardError {
  return new DashboardError(code, { message: `${DashboardError.messages[code]} (HTTP ${status})`, cause });
}

/** One member's sign-in and what it may read about them: who they are and which servers they are in. */
export class DiscordOAuth {
  readonly #o: OAuthOptions;
  constructor(options: OAuthOptions) {
    this.#o = options;
  }

  /** The page Discord shows the member: asks for `identify guilds`, comes back with `state`. */
  authorizeUrl(state: string, challenge: string): string {
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: this.#o.clientId(),
      scope: 'identify guilds',
      redirect_uri: this.#o.redirectUri(),
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    return `${this.#o.endpoints.authorize}?${query}`;
  }

  /** Exchanges the code for an access token (with the verifier of its challenge). */
  async exchange(code: string, verifier: string): Promise<{ accessToken: string; expiresInS: number }> {
    const body = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: this.#o.redirectUri(),
      code_verifier: verifier,
    });
    const res = await this.#call(this.#o.endpoints.token, { method: 'POST', headers: this.#client(), body });
    if (res.status === 400 || res.status === 401) throw failed('oauth_rejected', res.status);
    const json = (await this.#json(res)) as { access_token?: unknown; expires_in?: unknown; scope?: unknown };
    if (typeof json.access_token !== 'string') throw failed('oauth_unavailable', res.status);
    return { accessToken: json.access_token, expiresInS: typeof json.expires_in === 'number' ? json.expires_in : 3600 };
  }

  /** Revokes the access token (sign-out); a token Discord no longer knows counts as revoked. */
  async revoke(accessToken: string): Promise<void> {
    const body = new URLSearchParams({ token: accessToken, token_type_hint: 'access_token' });
    const res = await this.#call(this.#o.endpoints.revoke, { method: 'POST', headers: this.#client(), body });
    await res.body?.cancel();
    if (!res.ok && res.status !== 400) throw failed('oauth_unavailable', res.status);
  }

  /** The signed-in member (`identify`). */
  async user(accessToken: string): Promise<DiscordUser> {
    const u = (await this.#get('/users/@me', accessToken)) as {
      id: string;
      username: string;
      global_name?: string | null;
      avatar?: string | null;
    };
    return { id: String(u.id), name: u.global_name || u.username, avatar: u.avatar ?? null };
  }

  /** The servers the member is in (`guilds`), as Discord lists them for them. */
  async guilds(accessToken: string): Promise<DiscordUserGuild[]> {
    const list = (await this.#get('/users/@me/guilds', accessToken)) as { id: string; name: string; icon?: string | null }[];
    return Array.isArray(list) ? list.map((g) => ({ id: String(g.id), name: String(g.name), icon: g.icon ?? null })) : [];
  }

  async #get(path: string, accessToken: string): Promise<unknown> {
    const res = await this.#call(`${this.#o.endpoints.api}${path}`, { headers: { authorization: `Bearer ${accessToken}` } });
    if (res.status === 401) throw failed('oauth_rejected', res.status);
    return this.#json(res);
  }

  #client(): Record<string, string> {
    const basic = Buffer.from(`${encodeURIComponent(this.#o.clientId())}:${encodeURIComponent(this.#o.clientSecret)}`).toString('base64');
    return { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' };
  }

  async #call(url: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(this.#o.timeoutMs ?? 10_000) });
    } catch (error) {
      throw new DashboardError('oauth_unavailable', { cause: error });
    }
  }

  async #json(res: Response): Promise<unknown> {
    if (!res.ok) {
      await res.body?.cancel();
      throw failed('oauth_unavailable', res.status);
    }
    try {
      return await res.json();
    } catch (error) {
      throw failed('oauth_unavailable', res.status, error);
    }
  }
}
