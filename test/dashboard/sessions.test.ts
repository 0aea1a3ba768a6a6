import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { Sessions } from '../../src/dashboard/sessions.ts';
import { cookie, cookies } from '../../src/dashboard/http.ts';
import { oauthEndpoints, pkceChallenge } from '../../src/dashboard/oauth.ts';

// The dashboard's session rules on a clock the test moves: sign-ins bound to one browser and good
// once, sessions that expire and are new at every sign-in, the sign-in and request rate limits, the
// cookies read and set.
const user = { id: '1000000000000000002', name: 'Alice', avatar: null };

function at(start = 1_000_000) {
  const clock = { now: start };
  return {
    clock,
    sessions: new Sessions({ sessionMs: 60_000, loginMs: 10_000, loginsPerWindow: 3, loginWindowMs: 60_000 }, () => clock.now),
  };
}

describe('dashboard sessions', () => {
  it('GIVEN a sign-in THEN its state is good once, only with the cookie of the browser that started it, and only in time', () => {
    const { clock, sessions } = at();
    const a = sessions.beginLogin();
    expect(a.challenge).toBe(pkceChallenge(a.verifier));
    expect(sessions.takeLogin(a.state, 'another-state')).toBeUndefined();
    expect(sessions.takeLogin(a.state, a.state)).toBeUndefined(); // spent by the failed try
    const b = sessions.beginLogin();
    expect(sessions.takeLogin(b.state, b.state)?.verifier).toBe(b.verifier);
    expect(sessions.takeLogin(b.state, b.state)).toBeUndefined();
    const c = sessions.beginLogin();
    clock.now += 10_000;
    expect(sessions.takeLogin(c.state, c.state)).toBeUndefined();
  });

  it('GIVEN a session THEN a new id at every sign-in (the old one ended), expiring, ended at sign-out, CSRF compared whole', () => {
    const { clock, sessions } = at();
    const first = sessions.create(user, 'token-1');
    const second = sessions.create(user, 'token-2', first.id);
    expect(second.id).not.toBe(first.id);
    expect(sessions.get(first.id)).toBeUndefined();
    expect(sessions.get(second.id)?.accessToken).toBe('token-2');
    expect(sessions.csrfMatches(second, second.csrf)).toBe(true);
    expect(sessions.csrfMatches(second, second.csrf.slice(1))).toBe(false);
    expect(sessions.csrfMatches(second, undefined)).toBe(false);
    clock.now += 60_000;
    expect(sessions.get(second.id)).toBeUndefined();
    const third = sessions.create(user, 'token-3');
    expect(sessions.end(third.id)?.accessToken).toBe('token-3');
    expect(sessions.get(third.id)).toBeUndefined();
  });

  it('GIVEN sign-ins from one address THEN at most the window allows, then a wait in seconds; another address is not held back', () => {
    const { clock, sessions } = at();
    expect([1, 2, 3].map(() => sessions.allowLogin('10.0.0.1').ok)).toEqual([true, true, true]);
    expect(sessions.allowLogin('10.0.0.1')).toEqual({ ok: false, retryAfterS: 60 });
    expect(sessions.allowLogin('10.0.0.2').ok).toBe(true);
    clock.now += 60_000;
    expect(sessions.allowLogin('10.0.0.1').ok).toBe(true);
  });

  it("GIVEN a session's API requests THEN at most the window allows, the first refusal flagged for the log; another session is not held back", () => {
    const clock = { now: 1_000_000 };
    const sessions = new Sessions({ requestsPerWindow: 3, requestWindowMs: 10_000 }, () => clock.now);
    const a = sessions.create(user, 'token-a');
    const b = sessions.create(user, 'token-b');
    expect([1, 2, 3].map(() => sessions.allowRequest(a).ok)).toEqual([true, true, true]);
    clock.now += 4_000;
    expect(sessions.allowRequest(a)).toEqual({ ok: false, retryAfterS: 6, first: true });
    expect(sessions.allowRequest(a)).toEqual({ ok: false, retryAfterS: 6, first: false });
    expect(sessions.allowRequest(b).ok).toBe(true);
    clock.now += 6_000;
    expect(sessions.allowRequest(a).ok).toBe(true);
    // A new sign-in is a new session with a window of its own.
    const again = sessions.create(user, 'token-c', a.id);
    expect(sessions.allowRequest(again).ok).toBe(true);
  });

  it('GIVEN a cookie header with a value that is not percent-encoding THEN that cookie is left out and named, the others read', () => {
    const jar = cookies({ headers: { cookie: 'ydash_session=%E0%A4%A; other=a%20b; broken=%%%' } } as IncomingMessage);
    expect([...jar]).toEqual([['other', 'a b']]);
    expect(jar.malformed).toEqual(['ydash_session', 'broken']);
  });

  it('GIVEN the public address THEN the session cookie is HttpOnly and SameSite=Lax always, Secure on https', () => {
    expect(cookie('ydash_session', 'v', { maxAgeS: 60, secure: true })).toBe(
      'ydash_session=v; Path=/; Max-Age=60; HttpOnly; SameSite=Lax; Secure',
    );
    expect(cookie('ydash_session', '', { maxAgeS: 0, secure: false })).toBe('ydash_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax');
  });

  it("GIVEN DISCORD_API_URL THEN Discord's OAuth2 endpoints beside it; unset, Discord's own", () => {
    expect(oauthEndpoints('http://127.0.0.1:3000/api')).toEqual({
      authorize: 'http://127.0.0.1:3000/oauth2/authorize',
      token: 'http://127.0.0.1:3000/api/v10/oauth2/token',
      revoke: 'http://127.0.0.1:3000/api/v10/oauth2/token/revoke',
      api: 'http://127.0.0.1:3000/api/v10',
    });
    expect(oauthEndpoints(undefined).authorize).toBe('https://discord.com/oauth2/authorize');
  });
});
