/**
 * A stand-in for Discord's user OAuth2 (authorize, token with PKCE, revoke, users/@me and
 * users/@me/guilds with a Bearer token), shaped as https://discord.com/developers/docs/topics/oauth2
 * describes them, answering from the local Discord's world. Only for the dashboard's in-process
 * story until the local Discord serves these endpoints itself.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FakeDiscord } from '@yomiage/local-discord';
import type { OAuthEndpoints } from '../../src/dashboard/oauth.ts';

export interface OAuthStub {
  endpoints: OAuthEndpoints;
  /** Discord's consent, given by `userId`: where the browser is sent back. */
  approve(authorizeUrl: string, userId: string): string;
  /** Access tokens revoked so far. */
  revoked: string[];
  close(): Promise<void>;
}

export async function startOAuthStub(discord: FakeDiscord, client: { id: string; secret: string }): Promise<OAuthStub> {
  const codes = new Map<string, { userId: string; challenge: string; redirect: string }>();
  const tokens = new Map<string, string>();
  const revoked: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url!, 'http://stub');
      const form = new URLSearchParams(Buffer.concat(chunks).toString());
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const basic = Buffer.from(`${client.id}:${client.secret}`).toString('base64');
      if (url.pathname.startsWith('/api/v10/oauth2/') && req.headers.authorization !== `Basic ${basic}`)
        return send(401, { error: 'invalid_client' });
      if (url.pathname === '/api/v10/oauth2/token') {
        const code = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        if (
          !code ||
          createHash('sha256').update(verifier).digest('base64url') !== code.challenge ||
          form.get('redirect_uri') !== code.redirect
        )
          return send(400, { error: 'invalid_grant' });
        const token = randomBytes(16).toString('hex');
        tokens.set(token, code.userId);
        return send(200, { access_token: token, token_type: 'Bearer', expires_in: 604800, scope: 'identify guilds' });
      }
      if (url.pathname === '/api/v10/oauth2/token/revoke') {
        const token = form.get('token') ?? '';
        if (tokens.delete(token)) revoked.push(token);
        return send(200, {});
      }
      const userId = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
      if (!userId) return send(401, { message: '401: Unauthorized', code: 0 });
      const user = discord.guilds.flatMap((g) => g.members).find((m) => m.user.id === userId)!.user;
      if (url.pathname === '/api/v10/users/@me')
        return send(200, { id: user.id, username: user.username, global_name: user.globalName ?? null, avatar: null });
      if (url.pathname === '/api/v10/users/@me/guilds')
        return send(
          200,
          discord.guilds
            .filter((g) => g.members.some((m) => m.user.id === userId))
            .map((g) => ({ id: g.id, name: g.name, icon: null, owner: g.ownerId === userId, permissions: '0' })),
        );
      send(404, { message: '404: Not Found', code: 0 });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    endpoints: {
      authorize: `${base}/oauth2/authorize`,
      token: `${base}/api/v10/oauth2/token`,
      revoke: `${base}/api/v10/oauth2/token/revoke`,
      api: `${base}/api/v10`,
    },
    approve(authorizeUrl, userId) {
      const q = new URL(authorizeUrl).searchParams;
      if (q.get('client_id') !== client.id || q.get('code_challenge_method') !== 'S256' || q.get('scope') !== 'identify guilds')
        throw new Error(`unexpected authorize request: ${authorizeUrl}`);
      const code = randomBytes(8).toString('hex');
      codes.set(code, { userId, challenge: q.get('code_challenge')!, redirect: q.get('redirect_uri')! });
      return `${q.get('redirect_uri')}?code=${code}&state=${encodeURIComponent(q.get('state')!)}`;
    },
    revoked,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
