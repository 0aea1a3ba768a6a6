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
 * the form's "signed in as" choice picks the local user, and the `user` query parameter
 * pre-selects it (a shortcut only the local Discord has). Errors that make the redirect URI
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

/** GET: the consent page, or why there is none. */
export function authorizePage(state: DiscordState, query: URLSearchParams): PageResult {
  const parsed = parse(state, query);
  if ('status' in parsed) return parsed;
  return { status: 200, html: consentHtml(state, parsed, query.get('user') ?? undefined) };
}

/** POST: the member pressed Authorize or Cancel. */
export async function submitAuthorize(state: DiscordState, grants: OAuth2Grants, form: URLSearchParams): Promise<PageResult> {
  const parsed = parse(state, form);
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
    return page(200, 'Cancelled', `<p>${esc(bot.user.username)} was not authorized.</p>`);
  }
  const user = humanUser(state, form.get('user') ?? '');
  if (!user) return page(400, 'Unknown user', '<p>Pick a local user to sign in as.</p>');
  const extra: Record<string, string> = {};
  if (scopes.includes('bot')) {
    const guild = state.guild(form.get('guild_id') ?? undefined);
    if (!guild) return page(400, 'Pick a server', '<p>Choose the server to add the bot to.</p>');
    if (!(memberPermissions(guild, user.id) & PERMISSIONS.ManageGuild)) {
      return page(403, 'Missing permissions', `<p>${esc(user.username)} needs Manage Server in ${esc(guild.name)} to add a bot.</p>`);
    }
    const permissions = form.get('permissions');
    await addBotToGuild(state, bot.applicationId, guild.id, permissions ? BigInt(permissions) : undefined);
    extra.guild_id = guild.id;
    if (permissions) extra.permissions = permissions;
  }
  if (!codeFlow) return page(200, 'Authorized', `<p>${esc(bot.user.username)} was added to the server.</p>`);
  const code = grants.issueCode({
    bot,
    userId: user.id,
    scopes,
    redirectUri: form.get('redirect_uri') ?? undefined,
    codeChallenge: form.get('code_challenge') ?? undefined,
  });
  return redirect(redirectUri!, { code, state: stateParam, ...extra });
}

function parse(state: DiscordState, params: URLSearchParams): AuthorizeRequest | PageResult {
  const bot = state.botByApplication(params.get('client_id') ?? '');
  if (!bot) return page(400, 'Unknown application', '<p>Invalid OAuth2 <code>client_id</code>.</p>');
  const scopes = (params.get('scope') ?? '').split(/[\s+]+/).filter(Boolean);
  const responseType = params.get('response_type');
  const codeFlow = responseType !== null || !scopes.includes('bot');
  let redirectUri: string | undefined;
  if (codeFlow) {
    const given = params.get('redirect_uri');
    // Without redirect_uri Discord uses the application's only registered one.
    redirectUri = given ?? (bot.redirectUris.length === 1 ? bot.redirectUris[0] : undefined);
    if (!redirectUri || !bot.redirectUris.includes(redirectUri)) {
      return page(400, 'Invalid redirect', '<p>Invalid OAuth2 <code>redirect_uri</code>.</p>');
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
    return page(400, 'Invalid scope', '<p>Invalid OAuth2 <code>scope</code>.</p>');
  }
  const permissions = params.get('permissions');
  if (permissions !== null && !/^\d{1,20}$/.test(permissions))
    return page(400, 'Invalid permissions', '<p>Invalid <code>permissions</code>.</p>');
  return { bot, scopes, params, redirectUri, codeFlow };
}

/** The local people one can sign in as: every member of a guild who is not a bot. */
function humanUsers(state: DiscordState): FakeUser[] {
  const seen = new Map<string, FakeUser>();
  for (const guild of state.guilds) for (const m of guild.members) if (!m.user.bot && !seen.has(m.user.id)) seen.set(m.user.id, m.user);
  return [...seen.values()];
}

function humanUser(state: DiscordState, id: string): FakeUser | undefined {
  return humanUsers(state).find((u) => u.id === id);
}

function consentHtml(state: DiscordState, request: AuthorizeRequest, preselected: string | undefined): string {
  const { bot, scopes, params } = request;
  const users = humanUsers(state);
  const fallback = state.guilds[0]?.ownerId;
  const chosen = users.find((u) => u.id === preselected)?.id ?? users.find((u) => u.id === fallback)?.id ?? users[0]?.id;
  const hidden = [...params]
    .filter(([name]) => name !== 'user' && name !== 'action' && !(name === 'guild_id' && scopes.includes('bot')))
    .map(([name, value]) => `<input type="hidden" name="${esc(name)}" value="${esc(value)}">`)
    .join('\n');
  const userSelect = users
    .map(
      (u) =>
        `<option value="${esc(u.id)}"${u.id === chosen ? ' selected' : ''}>${esc(u.globalName ?? u.username)} (${esc(u.username)})</option>`,
    )
    .join('');
  const guildField = scopes.includes('bot')
    ? guildSelect(state.guilds, params.get('guild_id'), params.get('disable_guild_select') === 'true')
    : '';
  const what = scopes.map((s) => `<li>${esc(SCOPE_TEXT[s] ?? s)}</li>`).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Authorize ${esc(bot.user.username)} - local Discord</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:2rem auto;padding:0 1rem}label{display:block;margin:.8rem 0 .2rem}
select,button{font-size:1rem;padding:.4rem}.actions{margin-top:1.2rem;display:flex;gap:.6rem}</style></head>
<body><main>
<h1>${esc(bot.user.username)} wants to access your account</h1>
<p>The local Discord (a development tool): no password, pick who signs in.</p>
<form method="post" action="/oauth2/authorize">
${hidden}
<label for="user">Signed in as</label>
<select id="user" name="user">${userSelect}</select>
${guildField}
<p>This will allow ${esc(bot.user.username)} to:</p><ul>${what}</ul>
<div class="actions"><button type="submit" name="action" value="cancel">Cancel</button>
<button type="submit" name="action" value="authorize">Authorize</button></div>
</form></main></body></html>`;
}

function guildSelect(guilds: readonly FakeGuild[], preselected: string | null, locked: boolean): string {
  const options = guilds
    .filter((g) => !locked || g.id === preselected)
    .map((g) => `<option value="${esc(g.id)}"${g.id === preselected ? ' selected' : ''}>${esc(g.name)}</option>`)
    .join('');
  return `<label for="guild_id">Add to server</label><select id="guild_id" name="guild_id">${options}</select>`;
}

const SCOPE_TEXT: Record<string, string> = {
  identify: 'Access your username, avatar, and banner',
  email: 'Access your email address',
  guilds: 'Know what servers you are in',
  'guilds.members.read': 'Read your member info (nickname, avatar, roles) in the servers you are in',
  bot: 'Add a bot to a server',
  'applications.commands': 'Create commands',
};

function redirect(target: string, query: Record<string, string | null | undefined>): PageResult {
  const url = new URL(target);
  for (const [name, value] of Object.entries(query)) if (value !== null && value !== undefined) url.searchParams.set(name, value);
  return { status: 302, location: url.toString() };
}

function page(status: number, title: string, body: string): PageResult {
  return {
    status,
    html: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)} - local Discord</title></head><body><main><h1>${esc(title)}</h1>${body}</main></body></html>`,
  };
}

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
