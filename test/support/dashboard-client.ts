import { startDashboard, type DashboardServer } from '../../src/dashboard/server.ts';
import { clientView } from '../../src/dashboard/access.ts';
import { slashCommands } from '../../src/discord/interactions/command.ts';
import { createLogger, type Logger } from '../../src/util/log.ts';
import type { Harness } from './bot-harness.ts';

/**
 * A browser's side of the web dashboard for tests that speak HTTP: its cookie jar, signing in
 * through an OAuth2 authorize page (following its redirects as a browser would), and the API
 * calls with or without the session's CSRF token.
 */
export interface DashboardCall {
  status: number;
  body: any;
  headers: Headers;
}

export class DashboardClient {
  readonly jar = new Map<string, string>();
  csrf: string | undefined;
  readonly baseUrl: string;
  constructor(baseUrl: string) {
    this.baseUrl = baseUrl;
  }

  /** One request; cookies kept as a browser keeps them (Max-Age=0 deletes one); redirects not followed. */
  async request(url: string, init: RequestInit & { json?: unknown; csrf?: string | null } = {}): Promise<DashboardCall> {
    const headers = new Headers(init.headers);
    const target = new URL(url, this.baseUrl);
    if (target.origin === new URL(this.baseUrl).origin && this.jar.size > 0)
      headers.set('cookie', [...this.jar].map(([k, v]) => `${k}=${v}`).join('; '));
    if (init.json !== undefined) {
      headers.set('content-type', 'application/json');
      headers.set('origin', new URL(this.baseUrl).origin);
    }
    const csrf = init.csrf === undefined ? this.csrf : init.csrf;
    if (csrf) headers.set('x-csrf-token', csrf);
    const payload = init.json === undefined ? init.body : JSON.stringify(init.json);
    const res = await fetch(target, {
      ...init,
      headers,
      redirect: 'manual',
      ...(payload === undefined || payload === null ? {} : { body: payload }),
    });
    if (target.origin === new URL(this.baseUrl).origin)
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const [name, value] = [pair!.slice(0, pair!.indexOf('=')), pair!.slice(pair!.indexOf('=') + 1)];
        if (/Max-Age=0\b/.test(line)) this.jar.delete(name);
        else this.jar.set(name, value);
      }
    const type = res.headers.get('content-type') ?? '';
    const body = type.startsWith('application/json') ? await res.json() : await res.text();
    return { status: res.status, body, headers: res.headers };
  }

  /**
   * Signs in: /auth/login, then Discord's authorize page answered by `approve` (it gets the
   * authorize URL and returns where Discord sends the browser back), then the callback. Resolves
   * with the session's CSRF token.
   */
  async signIn(approve: (authorizeUrl: string) => Promise<string>): Promise<string> {
    const login = await this.request('/auth/login');
    if (login.status !== 302) throw new Error(`/auth/login answered ${login.status}`);
    const back = await approve(login.headers.get('location')!);
    const callback = await this.request(back);
    if (callback.status !== 302 || callback.headers.get('location') !== '/') throw new Error(`callback answered ${callback.status}`);
    const session = await this.request('/api/session');
    this.csrf = session.body.csrf;
    return this.csrf!;
  }

  api(method: string, path: string, json?: unknown, options: { csrf?: string | null } = {}): Promise<DashboardCall> {
    return this.request(`/api${path}`, { method, ...(json === undefined ? {} : { json }), ...options });
  }
}

/**
 * The local Discord's consent page answered by `userId` (its form posted with Authorize, as a
 * member clicking the button does): where Discord sends the browser back.
 */
export async function approveAtLocalDiscord(authorizeUrl: string, userId: string): Promise<string> {
  const url = new URL(authorizeUrl);
  const form = new URLSearchParams(url.searchParams);
  form.set('user', userId);
  form.set('action', 'authorize');
  const res = await fetch(new URL('/oauth2/authorize', url.origin), { method: 'POST', body: form, redirect: 'manual' });
  const location = res.headers.get('location');
  if (res.status !== 302 || !location) throw new Error(`the consent page answered ${res.status}: ${await res.text()}`);
  return location;
}

/**
 * The web dashboard in front of a harness's bot, signed in through the local Discord's OAuth2 (the bot's own
 * application and its client secret); `view` as the bot serves it (one process by default), the logger silent
 * unless given.
 */
export async function startHarnessDashboard(
  h: Harness,
  o: { view?: ReturnType<typeof clientView>; logger?: Logger; sessions?: Parameters<typeof startDashboard>[0]['sessions'] } = {},
): Promise<DashboardServer> {
  const dashboard = await startDashboard({
    config: {
      port: 0,
      host: '127.0.0.1',
      publicUrl: undefined,
      clientId: undefined,
      clientSecret: h.discord.bots[0]!.clientSecret,
      peers: [],
    },
    discordApiUrl: h.discord.apiUrl,
    applicationId: () => h.bot.client.application?.id,
    deps: {
      ctx: h.bot.context,
      commands: slashCommands(h.bot.commands.values()).map((c) => c.data),
      view: o.view ?? clientView(h.bot.client, undefined),
    },
    logger: o.logger ?? createLogger({ level: 'silent', secrets: [] }),
    ...(o.sessions ? { sessions: o.sessions } : {}),
  });
  h.discord.bots[0]!.redirectUris.push(`${dashboard.url}/auth/callback`);
  return dashboard;
}
