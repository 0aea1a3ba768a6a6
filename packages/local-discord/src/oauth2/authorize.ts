/**
 * The authorize page (`GET /oauth2/authorize`, what discord.com shows a member), in two flows
 * (https://discord.com/developers/docs/topics/oauth2):
 *
 * - Bot authorization (`scope` has `bot`): a member with Manage Server picks a guild (`guild_id`
 *   pre-selects it) and the bot joins it with a managed role of `permissions` (bot-membership.ts).
 * - Authorization code grant (`response_type=code`, e.g. `identify guilds` for a dashboard's
 *   sign-in): `redirect_uri` must be one the application registered; `state` is passed back;
 *   a PKCE `code_challenge` must use `code_challenge_method=S256`. Authorize redirects to
 *   `redirect_uri?code=...&state=...`, Cancel to `?error=access_denied&state=...`.
 *
 * The page is a form (POST /oauth2/authorize) with an Authorize button. There are no logins here:
 * the form's "signed in as" choice picks the local user (named as the servers show them: their
 * nickname, else their display name), and the `user` query parameter pre-selects it (a shortcut
 * only the local Discord has). It is in Japanese or English, after the browser's Accept-Language,
 * as Discord's follows the member's language. Errors that make the redirect URI
 * untrustworthy (unknown client, unregistered redirect URI) are shown on the page; the others are
 * sent to the redirect URI as `error` and `error_description`, as RFC 6749 section 4.1.2.1 says.
 */
import { addBotToGuild } from '../bot-membership.ts';
import { memberPermissions, PERMISSIONS, type FakeGuild, type FakeUser } from '../fixtures.ts';
import type { DiscordState } from '../state.ts';
import type { FakeBot } from '../types.ts';
import { USER_SCOPES, type OAuth2Grants } from './grants.ts';

/** Where the page answers: discord.com's own path, and the API's (Discord's metadata names that one). */
export const AUTHORIZE_PATHS = new Set(['/oauth2/authorize', '/api/oauth2/authorize', '/api/v10/oauth2/authorize']);

export interface PageResult {
  status: number;
  /** HTML to show, or a redirect. */
  html?: string;
  location?: string;
}

interface AuthorizeRequest {
  bot: FakeBot;
  scopes: string[];
  params: URLSearchParams;
  /** The code flow's redirect target (checked against the registered ones). */
  redirectUri: string | undefined;
  codeFlow: boolean;
}

/** The page's language: Japanese when the browser asks for it first, else English. */
type PageLang = 'ja' | 'en';

/** The language of a request's Accept-Language (its first choice). */
export function pageLang(acceptLanguage: string | undefined): PageLang {
  return acceptLanguage?.trim().toLowerCase().startsWith('ja') ? 'ja' : 'en';
}

/** GET: the consent page, or why there is none. */
export function authorizePage(state: DiscordState, query: URLSearchParams, lang: PageLang = 'en'): PageResult {
  const parsed = parse(state, query, lang);
  if ('status' in parsed) return parsed;
  return { status: 200, html: consentHtml(state, parsed, query.get('user') ?? undefined, lang) };
}

/** POST: the member pressed Authorize or Cancel. */
export async function submitAuthorize(
  state: DiscordState,
  grants: OAuth2Grants,
  form: URLSearchParams,
  lang: PageLang = 'en',
): Promise<PageResult> {
  const T = TEXT[lang];
  const page = (status: number, title: string, body: string) => pageHtml(lang, status, title, body);
  const parsed = parse(state, form, lang);
  if ('status' in parsed) return parsed;
  const { bot, scopes, codeFlow, redirectUri } = parsed;
  const stateParam = form.get('state');
  if (form.get('action') !== 'authorize') {
    if (codeFlow)
      return redirect(redirectUri!, {
        error: 'access_denied',
        error_description: 'The resource owner denied the request',
        state: stateParam,
      });
    return page(200, T.cancelled, `<p>${fill(T.cancelled_body, { bot: bot.user.username })}</p>`);
  }
  const user = humanUser(state, form.get('user') ?? '');
  if (!user) return page(400, T.unknown_user, `<p>${T.unknown_user_body}</p>`);
  const extra: Record<string, string> = {};
  if (scopes.includes('bot')) {
    const guild = state.guild(form.get('guild_id') ?? undefined);
    if (!guild) return page(400, T.pick_server, `<p>${T.pick_server_body}</p>`);
    if (!(memberPermissions(guild, user.id) & PERMISSIONS.ManageGuild)) {
      return page(403, T.missing_permissions, `<p>${fill(T.missing_permissions_body, { user: user.username, guild: guild.name })}</p>`);
    }
    const permissions = form.get('permissions');
    await addBotToGuild(state, bot.applicationId, guild.id, permissions ? BigInt(permissions) : undefined);
    extra.guild_id = guild.id;
    if (permissions) extra.permissions = permissions;
  }
  if (!codeFlow) return page(200, T.authorized, `<p>${fill(T.authorized_body, { bot: bot.user.username })}</p>`);
  const code = grants.issueCode({
    bot,
    userId: user.id,
    scopes,
    redirectUri: form.get('redirect_uri') ?? undefined,
    codeChallenge: form.get('code_challenge') ?? undefined,
  });
  return redirect(redirectUri!, { code, state: stateParam, ...extra });
}

function parse(state: DiscordState, params: URLSearchParams, lang: PageLang): AuthorizeRequest | PageResult {
  const T = TEXT[lang];
  const page = (status: number, title: string, body: string) => pageHtml(lang, status, title, body);
  const bot = state.botByApplication(params.get('client_id') ?? '');
  if (!bot) return page(400, T.unknown_application, `<p>${fill(T.invalid_param, { param: 'client_id' })}</p>`);
  const scopes = (params.get('scope') ?? '').split(/[\s+]+/).filter(Boolean);
  const responseType = params.get('response_type');
  const codeFlow = responseType !== null || !scopes.includes('bot');
  let redirectUri: string | undefined;
  if (codeFlow) {
    const given = params.get('redirect_uri');
    // Without redirect_uri Discord uses the application's only registered one.
    redirectUri = given ?? (bot.redirectUris.length === 1 ? bot.redirectUris[0] : undefined);
    if (!redirectUri || !bot.redirectUris.includes(redirectUri)) {
      return page(400, T.invalid_redirect, `<p>${fill(T.invalid_param, { param: 'redirect_uri' })}</p>`);
    }
    const stateParam = params.get('state');
    const fail = (error: string, description: string) =>
      redirect(redirectUri!, { error, error_description: description, state: stateParam });
    if (responseType !== 'code') return fail('unsupported_response_type', 'The authorization server does not support this response type');
    const known = new Set<string>([...USER_SCOPES, 'bot']);
    if (scopes.length === 0 || scopes.some((s) => !known.has(s)))
      return fail('invalid_scope', 'The requested scope is invalid, unknown, or malformed');
    const challenge = params.get('code_challenge');
    if (challenge !== null && (params.get('code_challenge_method') !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(challenge))) {
      return fail('invalid_request', 'code_challenge must be a base64url SHA-256 with code_challenge_method S256');
    }
  } else if (scopes.some((s) => s !== 'bot' && s !== 'applications.commands')) {
    return page(400, T.invalid_scope, `<p>${fill(T.invalid_param, { param: 'scope' })}</p>`);
  }
  const permissions = params.get('permissions');
  if (permissions !== null && !/^\d{1,20}$/.test(permissions))
    return page(400, T.invalid_permissions, `<p>${fill(T.invalid_param, { param: 'permissions' })}</p>`);
  return { bot, scopes, params, redirectUri, codeFlow };
}

/** The local people one can sign in as: every member of a guild who is not a bot, named as that server shows them. */
function humanUsers(state: DiscordState): Array<{ user: FakeUser; name: string }> {
  const seen = new Map<string, { user: FakeUser; name: string }>();
  for (const guild of state.guilds)
    for (const m of guild.members)
      if (!m.user.bot && !seen.has(m.user.id)) seen.set(m.user.id, { user: m.user, name: m.nick ?? m.user.globalName ?? m.user.username });
  return [...seen.values()];
}

function humanUser(state: DiscordState, id: string): FakeUser | undefined {
  return humanUsers(state).find((u) => u.user.id === id)?.user;
}

function consentHtml(state: DiscordState, request: AuthorizeRequest, preselected: string | undefined, lang: PageLang): string {
  const T = TEXT[lang];
  const { bot, scopes, params } = request;
  const users = humanUsers(state);
  const fallback = state.guilds[0]?.ownerId;
  const chosen =
    users.find((u) => u.user.id === preselected)?.user.id ?? users.find((u) => u.user.id === fallback)?.user.id ?? users[0]?.user.id;
  const hidden = [...params]
    .filter(([name]) => name !== 'user' && name !== 'action' && !(name === 'guild_id' && scopes.includes('bot')))
    .map(([name, value]) => `<input type="hidden" name="${esc(name)}" value="${esc(value)}">`)
    .join('\n');
  const userSelect = users
    .map((u) => `<option value="${esc(u.user.id)}"${u.user.id === chosen ? ' selected' : ''}>${esc(u.name)}</option>`)
    .join('');
  const guildField = scopes.includes('bot')
    ? guildSelect(state.guilds, params.get('guild_id'), params.get('disable_guild_select') === 'true', T.add_to_server)
    : '';
  const what = scopes.map((s) => `<li>${esc(T.scopes[s] ?? s)}</li>`).join('');
  const botName = bot.user.username;
  return `<!doctype html>
<html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${fill(T.title, { bot: botName })}</title>
<style>body{font-family:system-ui,'Noto Sans CJK JP',sans-serif;max-width:28rem;margin:2rem auto;padding:0 1rem}label{display:block;margin:.8rem 0 .2rem}
select,button{font-size:1rem;padding:.4rem}.actions{margin-top:1.2rem;display:flex;gap:.6rem}</style></head>
<body><main>
<h1>${fill(T.heading, { bot: botName })}</h1>
<p>${T.note}</p>
<form method="post" action="/oauth2/authorize">
${hidden}
<label for="user">${T.signed_in_as}</label>
<select id="user" name="user">${userSelect}</select>
${guildField}
<p>${fill(T.allow, { bot: botName })}</p><ul>${what}</ul>
<div class="actions"><button type="submit" name="action" value="cancel">${T.cancel}</button>
<button type="submit" name="action" value="authorize">${T.authorize}</button></div>
</form></main></body></html>`;
}

function guildSelect(guilds: readonly FakeGuild[], preselected: string | null, locked: boolean, label: string): string {
  const options = guilds
    .filter((g) => !locked || g.id === preselected)
    .map((g) => `<option value="${esc(g.id)}"${g.id === preselected ? ' selected' : ''}>${esc(g.name)}</option>`)
    .join('');
  return `<label for="guild_id">${label}</label><select id="guild_id" name="guild_id">${options}</select>`;
}

/** Every text of the page, in both languages (Discord's own wording where it has one). */
const TEXT = {
  en: {
    title: 'Authorize {bot} - local Discord',
    heading: '{bot} wants to access your account',
    note: 'The local Discord (a development tool): no password, pick who signs in.',
    signed_in_as: 'Signed in as',
    add_to_server: 'Add to server',
    allow: 'This will allow {bot} to:',
    cancel: 'Cancel',
    authorize: 'Authorize',
    cancelled: 'Cancelled',
    cancelled_body: '{bot} was not authorized.',
    authorized: 'Authorized',
    authorized_body: '{bot} was added to the server.',
    unknown_user: 'Unknown user',
    unknown_user_body: 'Pick a local user to sign in as.',
    pick_server: 'Pick a server',
    pick_server_body: 'Choose the server to add the bot to.',
    missing_permissions: 'Missing permissions',
    missing_permissions_body: '{user} needs Manage Server in {guild} to add a bot.',
    unknown_application: 'Unknown application',
    invalid_redirect: 'Invalid redirect',
    invalid_scope: 'Invalid scope',
    invalid_permissions: 'Invalid permissions',
    invalid_param: 'Invalid OAuth2 <code>{param}</code>.',
    scopes: {
      identify: 'Access your username, avatar, and banner',
      email: 'Access your email address',
      guilds: 'Know what servers you are in',
      'guilds.members.read': 'Read your member info (nickname, avatar, roles) in the servers you are in',
      bot: 'Add a bot to a server',
      'applications.commands': 'Create commands',
    } as Record<string, string>,
  },
  ja: {
    title: '{bot} を認証 - ローカルDiscord',
    heading: '{bot} があなたのアカウントへのアクセスを求めています',
    note: 'ローカルDiscord（開発用のツール）です。パスワードはありません。サインインする人を選んでください。',
    signed_in_as: 'サインインするユーザー',
    add_to_server: '追加するサーバー',
    allow: '{bot} に次のことを許可します:',
    cancel: 'キャンセル',
    authorize: '認証',
    cancelled: 'キャンセルしました',
    cancelled_body: '{bot} は認証されませんでした。',
    authorized: '認証しました',
    authorized_body: '{bot} をサーバーに追加しました。',
    unknown_user: '不明なユーザー',
    unknown_user_body: 'サインインするローカルユーザーを選んでください。',
    pick_server: 'サーバーを選んでください',
    pick_server_body: 'ボットを追加するサーバーを選んでください。',
    missing_permissions: '権限がありません',
    missing_permissions_body: 'ボットを追加するには、{user} に {guild} の「サーバー管理」権限が必要です。',
    unknown_application: '不明なアプリケーション',
    invalid_redirect: '無効なリダイレクト先',
    invalid_scope: '無効なスコープ',
    invalid_permissions: '無効な権限',
    invalid_param: 'OAuth2 の <code>{param}</code> が無効です。',
    scopes: {
      identify: 'ユーザー名、アバター、バナーへのアクセス',
      email: 'メールアドレスへのアクセス',
      guilds: '参加しているサーバーを知る',
      'guilds.members.read': '参加しているサーバーでのメンバー情報（ニックネーム、アバター、ロール）を読む',
      bot: 'サーバーにボットを追加する',
      'applications.commands': 'コマンドを作成する',
    } as Record<string, string>,
  },
} satisfies Record<PageLang, Record<string, unknown>>;

/** A text with its {placeholders} filled, each value HTML-escaped. */
function fill(template: string, vars: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? esc(vars[name]!) : whole));
}

function redirect(target: string, query: Record<string, string | null | undefined>): PageResult {
  const url = new URL(target);
  for (const [name, value] of Object.entries(query)) if (value !== null && value !== undefined) url.searchParams.set(name, value);
  return { status: 302, location: url.toString() };
}

function pageHtml(lang: PageLang, status: number, title: string, body: string): PageResult {
  return {
    status,
    html: `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><title>${esc(title)} - ${lang === 'ja' ? 'ローカルDiscord' : 'local Discord'}</title></head><body><main><h1>${esc(title)}</h1>${body}</main></body></html>`,
  };
}

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
