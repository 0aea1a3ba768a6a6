import { timingSafeEqual } from 'node:crypto';
import { pkceChallenge, randomToken } from './oauth.ts';

// The dashboard's sessions, sign-ins under way and the rate limits (sign-ins per address, requests
// per session), held in this process's memory: a restart signs everyone out (they sign in again
// with one click), and nothing of a session (its Discord access token above all) is ever written
// to disk.

/** How long a session lasts from sign-in, and how long a sign-in may take at Discord. */
const SESSION_DEFAULTS = {
  sessionMs: 8 * 3_600_000,
  loginMs: 10 * 60_000,
  /** Sign-ins one address may start per window, and the window. */
  loginsPerWindow: 10,
  loginWindowMs: 60_000,
  /**
   * API requests one session may make per window: far above what a person clicking through the
   * page makes (a server's page is about ten), far below a script looping over ids.
   */
  requestsPerWindow: 120,
  requestWindowMs: 60_000,
  /** Past this many sessions or sign-ins under way, the oldest are forgotten. */
  maxSessions: 10_000,
  maxLogins: 10_000,
} as const;

export type SessionOptions = { -readonly [K in keyof typeof SESSION_DEFAULTS]: number };

/** A rate limit's answer: go ahead, or wait this many seconds. */
type Allowed = { ok: true } | { ok: false; retryAfterS: number };

export interface Session {
  /** The cookie's value: 256 random bits, a new one at every sign-in. */
  readonly id: string;
  /** The CSRF token every change must carry in its X-CSRF-Token header. */
  readonly csrf: string;
  readonly userId: string;
  readonly name: string;
  readonly avatar: string | null;
  /** Discord's access token (identify, guilds): revoked at sign-out. */
  readonly accessToken: string;
  readonly expiresAt: number;
}

/** A sign-in between the redirect to Discord and its return: its PKCE verifier, bound to one state. */
interface PendingLogin {
  readonly state: string;
  readonly verifier: string;
  readonly challenge: string;
  readonly expiresAt: number;
}

export class Sessions {
  readonly #o: SessionOptions;
  readonly #now: () => number;
  readonly #sessions = new Map<string, Session>();
  readonly #logins = new Map<string, PendingLogin>();
  readonly #attempts = new Map<string, { windowStart: number; count: number }>();
  readonly #requests = new Map<string, { windowStart: number; count: number }>();

  constructor(options: Partial<SessionOptions> = {}, now: () => number = Date.now) {
    this.#o = { ...SESSION_DEFAULTS, ...options };
    this.#now = now;
  }

  get sessionMs(): number {
    return this.#o.sessionMs;
  }

  get loginMs(): number {
    return this.#o.loginMs;
  }

  /** Whether `address` may start another sign-in now; otherwise the seconds until it may. */
  allowLogin(address: string): Allowed {
    return this.#allow(this.#attempts, address, this.#o.loginsPerWindow, this.#o.loginWindowMs, this.#o.maxLogins);
  }

  /**
   * Whether the session may make another API request now; otherwise the seconds until it may, and
   * whether this is the window's first refusal (the one worth a log line).
   */
  allowRequest(session: Session): Allowed & { first?: boolean } {
    const allowed = this.#allow(this.#requests, session.id, this.#o.requestsPerWindow, this.#o.requestWindowMs, this.#o.maxSessions);
    return allowed.ok ? allowed : { ...allowed, first: this.#requests.get(session.id)!.count++ === this.#o.requestsPerWindow };
  }

  /** A fixed window per key: `limit` in `windowMs`, then a wait in seconds. */
  #allow(windows: Map<string, { windowStart: number; count: number }>, key: string, limit: number, windowMs: number, max: number): Allowed {
    const now = this.#now();
    const seen = windows.get(key);
    if (!seen || now - seen.windowStart >= windowMs) {
      if (windows.size >= max) windows.clear();
      windows.set(key, { windowStart: now, count: 1 });
      return { ok: true };
    }
    if (seen.count >= limit) return { ok: false, retryAfterS: Math.max(1, Math.ceil((seen.windowStart + windowMs - now) / 1000)) };
    seen.count++;
    return { ok: true };
  }

  /** A new sign-in: its state (also set as a cookie of the browser that started it) and PKCE pair. */
  beginLogin(): PendingLogin {
    this.#prune(this.#logins, this.#o.maxLogins);
    const verifier = randomToken(48);
    const login = { state: randomToken(), verifier, challenge: pkceChallenge(verifier), expiresAt: this.#now() + this.#o.loginMs };
    this.#logins.set(login.state, login);
    return login;
  }

  /** The sign-in of `state`, once (a replayed or expired state gives nothing), if the browser's cookie names it too. */
  takeLogin(state: string, cookieState: string | undefined): PendingLogin | undefined {
    const login = this.#logins.get(state);
    if (!login) return undefined;
    this.#logins.delete(state);
    if (login.expiresAt <= this.#now() || cookieState === undefined || !same(cookieState, state)) return undefined;
    return login;
  }

  /** A new session for a member Discord signed in (its id never reused; `replacing` ends the browser's old one). */
  create(user: { id: string; name: string; avatar: string | null }, accessToken: string, replacing?: string): Session {
    if (replacing) this.end(replacing);
    this.#prune(this.#sessions, this.#o.maxSessions);
    const session: Session = {
      id: randomToken(),
      csrf: randomToken(),
      userId: user.id,
      name: user.name,
      avatar: user.avatar,
      accessToken,
      expiresAt: this.#now() + this.#o.sessionMs,
    };
    this.#sessions.set(session.id, session);
    return session;
  }

  /** The live session of a cookie value, or undefined (unknown, ended or expired). */
  get(id: string | undefined): Session | undefined {
    if (!id) return undefined;
    const session = this.#sessions.get(id);
    if (!session) return undefined;
    if (session.expiresAt <= this.#now()) {
      this.#sessions.delete(id);
      return undefined;
    }
    return session;
  }

  /** Ends the session: it is forgotten at once (its token is the caller's to revoke). */
  end(id: string): Session | undefined {
    const session = this.#sessions.get(id);
    this.#sessions.delete(id);
    this.#requests.delete(id);
    return session;
  }

  /** Whether `token` is the session's CSRF token (compared in constant time). */
  csrfMatches(session: Session, token: string | undefined): boolean {
    return token !== undefined && same(token, session.csrf);
  }

  /** Drops what expired; past `max`, the oldest entries too. */
  #prune<V extends { expiresAt: number }>(map: Map<string, V>, max: number): void {
    const now = this.#now();
    for (const [key, value] of map) if (value.expiresAt <= now) map.delete(key);
    for (const key of map.keys()) {
      if (map.size < max) break;
      map.delete(key);
    }
  }
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
