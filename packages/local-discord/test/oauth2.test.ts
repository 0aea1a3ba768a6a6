/**
 * OAuth2 for users, as a web dashboard signs in with Discord: the authorize page, the code
 * exchange with PKCE, refresh, revocation, and the Bearer routes users/@me and users/@me/guilds.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_IDS, startFakeDiscord, type FakeDiscord } from '../src/server.ts';
import { defaultGuild } from '../src/fixtures.ts';

const REDIRECT = 'http://127.0.0.1:9/auth/callback';
/** A member known in the server by a nickname other than their display name. */
const TARO = { id: '1000000000000000199', username: 'taro', globalName: 'たろう' };
let fake: FakeDiscord;

beforeAll(async () => {
  const guild = defaultGuild();
  guild.members.push({ user: TARO, nick: 'タロー', roles: [] });
  fake = await startFakeDiscord({
    guilds: [guild],
    redirectUris: [REDIRECT],
    extraBots: [{ user: { id: '1200000000000000002', username: 'yomiage-2' }, guildIds: [], redirectUris: [REDIRECT] }],
  });
});

afterAll(async () => {
  await fake?.close();
});

const app = () => fake.bots[0]!;
const origin = () => new URL(fake.apiUrl).origin;

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

function authorizeQuery(extra: Record<string, string> = {}): Record<string, string> {
  return {
    response_type: 'code',
    client_id: app().applicationId,
    scope: 'identify guilds',
    redirect_uri: REDIRECT,
    state: 'st-1',
    ...extra,
  };
}

/** Presses a button on the consent page as `user`; the redirect's URL (or the page's status). */
async function consent(query: Record<string, string>, user: string, action = 'authorize'): Promise<URL | number> {
  const res = await fetch(`${origin()}/oauth2/authorize`, {
    method: 'POST',
    body: new URLSearchParams({ ...query, user, action }),
    redirect: 'manual',
  });
  return res.status === 302 ? new URL(res.headers.get('location')!) : res.status;
}

async function codeFor(user: string, challenge?: string): Promise<string> {
  const back = await consent(authorizeQuery(challenge ? { code_challenge: challenge, code_challenge_method: 'S256' } : {}), user);
  if (typeof back === 'number') throw new Error(`consent answered ${back}`);
  return back.searchParams.get('code')!;
}

async function token(
  body: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${fake.apiUrl}/v10/oauth2/token`, { method: 'POST', body: new URLSearchParams(body), headers });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const secretBody = () => ({ client_id: app().applicationId, client_secret: app().clientSecret });

async function bearer(path: string, accessToken: string): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${fake.apiUrl}/v10${path}`, { headers: { authorization: `Bearer ${accessToken}` } });
  return { status: res.status, json: await res.json() };
}

describe('OAuth2 for users', () => {
  it('the authorize page asks for consent; a bad client, redirect URI, scope or challenge method is refused', async () => {
    const page = await fetch(`${origin()}/oauth2/authorize?${new URLSearchParams({ ...authorizeQuery(), user: DEFAULT_IDS.bob })}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toMatch(/<button[^>]*value="authorize"[^>]*>Authorize<\/button>/);
    expect(html).toContain(`value="${DEFAULT_IDS.bob}" selected`);
    expect(html).toContain('Know what servers you are in');
    expect(html).toContain('<html lang="en">');
    // Each person as the server shows them: the nickname, not the account's own names.
    expect(html).toContain(`<option value="${TARO.id}">タロー</option>`);
    expect(html).not.toMatch(/たろう|\(taro\)/);

    // No redirect to a URI the application did not register, nor for an unknown client.
    for (const bad of [{ redirect_uri: 'http://127.0.0.1:9/evil' }, { client_id: '999' }]) {
      const res = await fetch(`${origin()}/oauth2/authorize?${new URLSearchParams(authorizeQuery(bad))}`, { redirect: 'manual' });
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
    }
    // Other errors go back to the client, with its state.
    const refusals: Array<[Record<string, string>, string]> = [
      [{ scope: 'identify wizardry' }, 'invalid_scope'],
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ code_challenge: pkce().challenge, code_challenge_method: 'plain' }, 'invalid_request'],
    ];
    for (const [bad, error] of refusals) {
      const res = await fetch(`${origin()}/oauth2/authorize?${new URLSearchParams(authorizeQuery(bad))}`, { redirect: 'manual' });
      const back = new URL(res.headers.get('location')!);
      expect([res.status, back.searchParams.get('error'), back.searchParams.get('state')]).toEqual([302, error, 'st-1']);
    }
    const cancelled = await consent(authorizeQuery(), DEFAULT_IDS.bob, 'cancel');
    expect(cancelled instanceof URL && [cancelled.searchParams.get('error'), cancelled.searchParams.get('code')]).toEqual([
      'access_denied',
      null,
    ]);
  });

  it('the authorize page and its answers are in Japanese for a browser that asks for it first', async () => {
    const headers = { 'accept-language': 'ja,en-US;q=0.9' };
    const page = await fetch(`${origin()}/oauth2/authorize?${new URLSearchParams(authorizeQuery())}`, { headers });
    const html = await page.text();
    expect(html).toContain('<html lang="ja">');
    expect(html).toMatch(/<button[^>]*value="authorize"[^>]*>認証<\/button>/);
    expect(html).toMatch(/<button[^>]*value="cancel"[^>]*>キャンセル<\/button>/);
    expect(html).toContain('<label for="user">サインインするユーザー</label>');
    expect(html).toContain('<li>参加しているサーバーを知る</li>');
    expect(html).toContain('>タロー</option>');
    // Nothing of the English page is left.
    for (const english of ['Authorize', 'Cancel', 'Signed in as', 'wants to access', 'This will allow', 'Know what servers'])
      expect(html).not.toContain(english);
    // A refusal shown on the page is Japanese too.
    const bad = await fetch(`${origin()}/oauth2/authorize?${new URLSearchParams(authorizeQuery({ client_id: '999' }))}`, { headers });
    expect(await bad.text()).toContain('OAuth2 の <code>client_id</code> が無効です。');
    // The bot-adding flow's answer, posted from the Japanese page.
    const added = await fetch(`${origin()}/oauth2/authorize`, {
      method: 'POST',
      headers,
      body: new URLSearchParams({
        client_id: app().applicationId,
        scope: 'bot',
        guild_id: DEFAULT_IDS.guild,
        user: DEFAULT_IDS.alice,
        action: 'authorize',
      }),
    });
    expect([added.status, await added.text()]).toEqual([403, expect.stringContaining('「サーバー管理」権限が必要です')]);
  });

  it('a code with its PKCE verifier buys tokens for users/@me and users/@me/guilds; a wrong verifier or a reused code does not', async () => {
    const { verifier, challenge } = pkce();
    const back = await consent(authorizeQuery({ code_challenge: challenge, code_challenge_method: 'S256' }), DEFAULT_IDS.bob);
    if (typeof back === 'number') throw new Error(`consent answered ${back}`);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('state')).toBe('st-1');
    const code = back.searchParams.get('code')!;
    const exchange = (codeVerifier: string) =>
      token({ ...secretBody(), grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: codeVerifier });

    expect(await exchange(pkce().verifier)).toEqual({
      status: 400,
      json: { error: 'invalid_grant', error_description: 'Invalid "code_verifier" in request.' },
    });
    const granted = await exchange(verifier);
    expect(granted.status).toBe(200);
    expect(granted.json).toMatchObject({ token_type: 'Bearer', scope: 'identify guilds', expires_in: 604800 });
    const access = granted.json.access_token as string;

    expect(await bearer('/users/@me', access)).toMatchObject({ status: 200, json: { id: DEFAULT_IDS.bob, username: 'bob' } });
    // OAuth2 libraries often call the API without a version, which Discord serves too.
    const unversioned = await fetch(`${origin()}/api/users/@me`, { headers: { authorization: `Bearer ${access}` } });
    expect(((await unversioned.json()) as { id: string }).id).toBe(DEFAULT_IDS.bob);
    const guilds = await bearer('/users/@me/guilds', access);
    expect(guilds.status).toBe(200);
    const [guild] = guilds.json as Array<{ id: string; owner: boolean; permissions: unknown }>;
    expect(guild).toMatchObject({ id: DEFAULT_IDS.guild, owner: false, permissions: expect.any(String) });
    expect(BigInt(guild!.permissions as string) & (1n << 5n)).toBe(1n << 5n); // Manage Server, through the Moderator role
    // A user token is no bot token.
    expect((await bearer(`/guilds/${DEFAULT_IDS.guild}/channels`, access)).status).toBe(401);

    // The same code again: refused, and what it bought is revoked.
    expect(await exchange(verifier)).toEqual({
      status: 400,
      json: { error: 'invalid_grant', error_description: 'Invalid "code" in request.' },
    });
    expect(await bearer('/users/@me', access)).toEqual({ status: 401, json: { message: '401: Unauthorized', code: 0 } });

    // The owner's guilds say so.
    const ownerToken = await token({
      ...secretBody(),
      grant_type: 'authorization_code',
      code: await codeFor(DEFAULT_IDS.owner),
      redirect_uri: REDIRECT,
    });
    const owned = (await bearer('/users/@me/guilds', ownerToken.json.access_token as string)).json as Array<{ owner: boolean }>;
    expect(owned.map((g) => g.owner)).toEqual([true]);
  });

  it('the client must prove itself (body or Basic); refresh rotates; revoke ends the authorization; no secret reaches the log', async () => {
    const code = await codeFor(DEFAULT_IDS.alice);
    const exchange = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT };
    expect(await token({ ...exchange, client_id: app().applicationId, client_secret: 'wrong' })).toEqual({
      status: 401,
      json: { error: 'invalid_client' },
    });
    expect(await token({ ...exchange, client_id: app().applicationId })).toEqual({ status: 401, json: { error: 'invalid_client' } });
    const json = await fetch(`${fake.apiUrl}/v10/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...exchange, ...secretBody() }),
    });
    expect(json.status).toBe(400);
    expect(await token({ ...exchange, redirect_uri: 'http://127.0.0.1:9/other', ...secretBody() })).toMatchObject({
      status: 400,
      json: { error: 'invalid_grant' },
    });
    expect(await token({ ...secretBody(), grant_type: 'password' })).toEqual({ status: 400, json: { error: 'unsupported_grant_type' } });

    const basic = `Basic ${Buffer.from(`${app().applicationId}:${app().clientSecret}`).toString('base64')}`;
    const first = await token(exchange, { authorization: basic });
    expect(first.status).toBe(200);

    const refreshed = await token({ ...secretBody(), grant_type: 'refresh_token', refresh_token: first.json.refresh_token as string });
    expect(refreshed.status).toBe(200);
    expect(refreshed.json.access_token).not.toBe(first.json.access_token);
    expect((await bearer('/users/@me', first.json.access_token as string)).status).toBe(401);
    expect(await token({ ...secretBody(), grant_type: 'refresh_token', refresh_token: first.json.refresh_token as string })).toEqual({
      status: 400,
      json: { error: 'invalid_grant', error_description: 'Invalid "refresh_token" in request.' },
    });

    const access = refreshed.json.access_token as string;
    expect((await bearer('/users/@me', access)).status).toBe(200);
    const revoke = await fetch(`${fake.apiUrl}/v10/oauth2/token/revoke`, {
      method: 'POST',
      body: new URLSearchParams({ ...secretBody(), token: access, token_type_hint: 'access_token' }),
    });
    expect(revoke.status).toBe(200);
    expect((await bearer('/users/@me', access)).status).toBe(401);
    expect(
      (await token({ ...secretBody(), grant_type: 'refresh_token', refresh_token: refreshed.json.refresh_token as string })).status,
    ).toBe(400);

    const log = JSON.stringify(fake.requests);
    for (const secret of [app().clientSecret, code, access, first.json.refresh_token as string]) expect(log).not.toContain(secret);
  });

  it('bot and identify together: the bot joins the picked guild and the redirect carries the code, guild_id and permissions', async () => {
    const extra = fake.bots[1]!;
    const query = {
      ...authorizeQuery({ client_id: extra.applicationId, scope: 'bot identify', permissions: '3145728' }),
      guild_id: DEFAULT_IDS.guild,
    };
    const back = await consent(query, DEFAULT_IDS.owner);
    if (typeof back === 'number') throw new Error(`consent answered ${back}`);
    expect([back.searchParams.get('guild_id'), back.searchParams.get('permissions'), back.searchParams.get('state')]).toEqual([
      DEFAULT_IDS.guild,
      '3145728',
      'st-1',
    ]);
    expect(fake.guilds[0]!.members.some((m) => m.user.id === extra.user.id)).toBe(true);
    const granted = await token({
      client_id: extra.applicationId,
      client_secret: extra.clientSecret,
      grant_type: 'authorization_code',
      code: back.searchParams.get('code')!,
      redirect_uri: REDIRECT,
    });
    expect(granted.json).toMatchObject({ token_type: 'Bearer', scope: 'bot identify' });
    // Another application's secret does not redeem it.
    expect(
      await token({ ...secretBody(), grant_type: 'refresh_token', refresh_token: granted.json.refresh_token as string }),
    ).toMatchObject({
      status: 400,
      json: { error: 'invalid_grant' },
    });
  });
});
