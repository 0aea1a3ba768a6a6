import type { UseCaseDeps } from '../usecases/deps.ts';
import type { Diagnosis } from '../discord/diagnosis/diagnosis.ts';
import type { RESTPostAPIChatInputApplicationCommandsJSONBody } from 'discord.js';
import type { Actor, AuditEntry } from '../domain/audit.ts';
import { shownNames } from '../discord/interactions/command.ts';
import { describeAudit, type AuditNames } from './audit-text.ts';
import { UserError } from '../i18n/errors.ts';
import { changeGuildSettings, type SettingsChange, setAdminVolume, setMuted } from '../usecases/settings.ts';
import { memberVoice, setMemberVoice, setMemberVolume, setReadName } from '../usecases/member-voice.ts';
import { addPoolVoice, removePoolVoice } from '../usecases/voice-pool.ts';
import { memberNamed, volumesOf } from './voice-settings.ts';
import { previewAudio } from '../usecases/previews.ts';
import { readFile } from 'node:fs/promises';
import { addEntry, dictionaryStore, removeEntry, checkImport, mayEditDictionary } from '../usecases/dictionaries.ts';
import { removeRoleAllowance, setRoleAllowance, changeControls, type ControlsChange } from '../usecases/limits.ts';
import {
  changeReading,
  changeReadingList,
  type ReadingChange,
  addAutoRead,
  autoReadChannels,
  removeAutoRead,
} from '../usecases/reading.ts';
import { serialiseDictionary } from '../speech/text/dictionary-file.ts';
import { t, type Lang } from '../i18n/texts.ts';
import { voiceLabel } from '../discord/interactions/voice-choices.ts';
import { KNOWN_STANDARD_VOICES, standardVoiceFacts } from '../tts/voices.ts';
import { accessTo, guildChannels, isVoiceType, type BotView, type GuildAccess } from './access.ts';
import { isAutoReadable } from '../discord/channels.ts';
import type { DiscordOAuth, DiscordUserGuild } from './oauth.ts';
import type { Session } from './sessions.ts';
import { ApiRefusal } from './errors.ts';
import { spendByChannel, usageReport } from '../usecases/usage.ts';
import { addFilter, filtersOf, removeFilter, setFloodLimit } from '../usecases/filters.ts';
import { followDictionary, setSharing, sharingOf, unfollowDictionary, type MemberFacts } from '../usecases/shared-dictionaries.ts';
import { memberCanView } from '../discord/audience/visibility.ts';

// The dashboard's JSON API behind a valid session: what a server's admins and each member may see
// and change. Every change goes through the use case its slash command uses (src/usecases), so the
// same validation and the same permission rule apply; a server's settings and dictionary need
// Manage Server as Discord says the member has it now.

/** An answer: a status and its JSON body, or a file. */
type ApiResult = { status: number; body: unknown; file?: { name: string; type: string } };

export interface ApiDeps {
  /** The use cases' collaborators, and what the bot records about its own silence (the health route). */
  ctx: UseCaseDeps & { diagnosis: Diagnosis };
  /** The slash commands as registered, to name settings as a member's client shows them. */
  commands: readonly RESTPostAPIChatInputApplicationCommandsJSONBody[];
  view: BotView;
  oauth: DiscordOAuth;
}

/** One request to the API: method, path segments after /api, the query, the JSON body when it has one. */
interface ApiRequest {
  method: string;
  segments: string[];
  query: URLSearchParams;
  body: Record<string, unknown>;
  session: Session;
  lang: Lang;
}

const ok = (body: unknown, status = 200): ApiResult => ({ status, body });
/** Routes one API request; throws ApiRefusal, UserError (400) or an unexpected error (500). */
export async function handleApi(deps: ApiDeps, req: ApiRequest): Promise<ApiResult> {
  const { method, segments: s, session } = req;
  const route = `${method} /${s.map((part, i) => (i === 1 && (s[0] === 'guilds' || s[0] === 'me') ? ':id' : part)).join('/')}`;
  switch (route) {
    case 'GET /session':
      return ok({ user: { id: session.userId, name: session.name, avatar: session.avatar }, csrf: session.csrf });
    case 'GET /voices':
      return ok(KNOWN_STANDARD_VOICES.map((id) => ({ id, label: voiceLabel(req.lang, id, standardVoiceFacts(id)) })));
    case 'GET /guilds':
      return ok(await listGuilds(deps, session));
    case 'GET /guilds/:id':
      return ok(await adminView(deps, await admin(deps, req), req.lang, session));
    case 'PATCH /guilds/:id/settings': {
      const access = await admin(deps, req);
      const channels = await guildChannels(access.guild, access.member);
      const isVoiceChannel = (id: string) => channels.some((c) => c.id === id && isVoiceType(c.type));
      await changeGuildSettings(deps.ctx, access.guild.id, actor(access), req.body as SettingsChange, { isVoiceChannel });
      return ok(await adminView(deps, access, req.lang, session));
    }
    case 'PUT /guilds/:id/muted': {
      const access = await admin(deps, req);
      // Checked before any lookup: an empty id would ask the gateway for every member of the server.
      const { memberId, muted } = req.body;
      if (memberId === undefined || memberId === '') throw new UserError('dashboard.member_missing');
      if (typeof muted !== 'boolean') throw new ApiRefusal('bad_request');
      if (typeof memberId !== 'string' || !SNOWFLAKE.test(memberId)) throw new UserError('dashboard.unknown_member');
      // A member of the server now, as /config mute's member option is.
      const member = await deps.view.member(access.guild, memberId);
      if (!member) throw new UserError('dashboard.unknown_member');
      const isBot = member.id === access.guild.client.user.id;
      await setMuted(deps.ctx, access.guild.id, actor(access), { id: member.id, isBot }, muted);
      return ok(mutedOf(deps, access));
    }
    case 'PUT /guilds/:id/volume': {
      // /config volume: null gives the member their own volume back.
      const access = await admin(deps, req);
      const member = await memberNamed(deps.view, access, req.body.memberId);
      await setAdminVolume(deps.ctx, access.guild.id, actor(access), member, req.body.volume ?? null);
      return ok(volumesOf(deps.ctx.repos, access));
    }
    case 'POST /guilds/:id/voice-pool':
    case 'DELETE /guilds/:id/voice-pool': {
      // /config voice-pool add and remove.
      const access = await admin(deps, req);
      const change = method === 'POST' ? addPoolVoice : removePoolVoice;
      return ok(await change(deps.ctx, access.guild.id, actor(access), req.body.voice));
    }
    case 'PATCH /guilds/:id/controls': {
      const access = await admin(deps, req);
      const roles = access.guild.roles.cache;
      await changeControls(deps.ctx, access.guild.id, actor(access), req.body as ControlsChange, (id) => roles.has(id));
      return ok(await adminView(deps, access, req.lang, session));
    }
    case 'PATCH /guilds/:id/reading': {
      const access = await admin(deps, req);
      const roles = access.guild.roles.cache;
      await changeReading(deps.ctx, access.guild.id, actor(access), req.body as ReadingChange, (id) => roles.has(id));
      return ok(await adminView(deps, access, req.lang, session));
    }
    case 'POST /guilds/:id/reading/bots':
    case 'DELETE /guilds/:id/reading/bots':
    case 'POST /guilds/:id/reading/never-roles':
    case 'DELETE /guilds/:id/reading/never-roles': {
      // /reading bot-add, bot-remove, never-role-add and never-role-remove.
      const access = await admin(deps, req);
      const guild = access.guild;
      const kind = s[3] === 'bots' ? 'bot' : 'never_role';
      const typed = kind === 'bot' ? req.body.botId : req.body.roleId;
      await changeReadingList(deps.ctx, guild.id, actor(access), kind, typed, method === 'POST', {
        roleExists: (id) => guild.roles.cache.has(id),
        selfId: guild.client.user.id,
        isHuman: (id) => guild.members.cache.get(id)?.user.bot === false,
      });
      return ok(readingLists(deps, guild.id));
    }
    case 'POST /guilds/:id/autoread': {
      const access = await admin(deps, req);
      const id = text(req.body.channelId);
      // Only a channel the admin can view, as /autoread's picker offers.
      const type = (await guildChannels(access.guild, access.member)).find((c) => c.id === id)?.type;
      await addAutoRead(deps.ctx, access.guild.id, actor(access), { id, readable: isAutoReadable(type) }, req.body.postAudio === true);
      return ok(autoReadChannels(deps.ctx, access.guild.id));
    }
    case 'DELETE /guilds/:id/autoread': {
      const access = await admin(deps, req);
      await removeAutoRead(deps.ctx, access.guild.id, actor(access), text(req.body.channelId));
      return ok(autoReadChannels(deps.ctx, access.guild.id));
    }
    case 'PUT /guilds/:id/roles': {
      const access = await admin(deps, req);
      const roleId = text(req.body.roleId);
      // The role must exist in the server now (as /spend's role option does).
      if (!access.guild.roles.cache.has(roleId) || roleId === access.guild.id)
        throw new UserError('roles.unknown', { vars: { role: roleId.slice(0, 30) } });
      await setRoleAllowance(deps.ctx, access.guild.id, actor(access), roleId, req.body.chars);
      return ok(deps.ctx.repos.roleAllowances.list(access.guild.id));
    }
    case 'DELETE /guilds/:id/roles': {
      const access = await admin(deps, req);
      await removeRoleAllowance(deps.ctx, access.guild.id, actor(access), text(req.body.roleId));
      return ok(deps.ctx.repos.roleAllowances.list(access.guild.id));
    }
    case 'GET /guilds/:id/audit': {
      const access = await admin(deps, req);
      return ok(
        auditOf(deps, access, req.lang, deps.ctx.repos.audit.recent(access.guild.id), await guildChannels(access.guild, access.member)),
      );
    }
    case 'GET /guilds/:id/usage': {
      const access = await admin(deps, req);
      return ok(await usageOf(deps, access, true));
    }
    case 'GET /guilds/:id/health': {
      const access = await admin(deps, req);
      return ok(healthOf(deps, access));
    }
    case 'POST /guilds/:id/dictionary': {
      const access = await editor(deps, req);
      const entry = await addEntry(serverStore(deps, access), req.lang, text(req.body.word), text(req.body.reading));
      return ok(entry, 201);
    }
    case 'DELETE /guilds/:id/dictionary': {
      const access = await editor(deps, req);
      return ok({ word: await removeEntry(serverStore(deps, access), text(req.body.word)) });
    }
    case 'POST /guilds/:id/dictionary/import': {
      const access = await editor(deps, req);
      return importInto(serverStore(deps, access), req);
    }
    case 'GET /guilds/:id/dictionary/export': {
      const access = await editor(deps, req);
      return exportOf(serverStore(deps, access).own(), req.query.get('format'));
    }
    case 'POST /guilds/:id/filters': {
      // /filter add, remove and flood: Manage Server, the same rules.
      const access = await admin(deps, req);
      const { word, action, reading } = req.body;
      await addFilter(deps.ctx, access.guild.id, actor(access), req.lang, { word, action, reading });
      return ok(filtersOf(deps.ctx, access.guild.id), 201);
    }
    case 'DELETE /guilds/:id/filters': {
      const access = await admin(deps, req);
      await removeFilter(deps.ctx, access.guild.id, actor(access), req.body.word);
      return ok(filtersOf(deps.ctx, access.guild.id));
    }
    case 'PUT /guilds/:id/filters/flood': {
      const access = await admin(deps, req);
      await setFloodLimit(deps.ctx, access.guild.id, actor(access), req.body.messages);
      return ok(filtersOf(deps.ctx, access.guild.id));
    }
    case 'PUT /guilds/:id/dictionary/sharing': {
      // /dictionary share, follow and unfollow: Manage Server, the same rules.
      const access = await admin(deps, req);
      await setSharing(deps.ctx, access.guild.id, actor(access), req.body.followable);
      return ok(await sharingOf(deps.ctx, access.guild.id, memberFacts(deps, session)));
    }
    case 'POST /guilds/:id/dictionary/follows':
    case 'DELETE /guilds/:id/dictionary/follows': {
      const access = await admin(deps, req);
      const facts = memberFacts(deps, session);
      if (method === 'POST') await followDictionary(deps.ctx, access.guild.id, actor(access), req.body.source, facts);
      else await unfollowDictionary(deps.ctx, access.guild.id, actor(access), req.body.source, facts);
      return ok(await sharingOf(deps.ctx, access.guild.id, facts));
    }
    case 'GET /me/:id':
      return ok(memberView(deps, await memberOf(deps, req)));
    case 'GET /guilds/:id/dictionary': {
      const access = await editor(deps, req);
      return ok(deps.ctx.repos.dictionary.own(access.guild.id));
    }
    case 'GET /me/:id/usage':
      return ok(await usageOf(deps, await memberOf(deps, req), false));
    case 'PATCH /me/:id/voice': {
      const access = await memberOf(deps, req);
      const body = req.body as { voice?: string | null; speed?: number | null; pitch?: number | null };
      await setMemberVoice(deps.ctx, access.guild.id, session.userId, { voice: body.voice, speed: body.speed, pitch: body.pitch });
      return ok(memberView(deps, access));
    }
    case 'PUT /me/:id/volume': {
      const access = await memberOf(deps, req);
      await setMemberVolume(deps.ctx, access.guild.id, session.userId, req.body.volume ?? null);
      return ok(memberView(deps, access));
    }
    case 'PUT /me/:id/name': {
      const access = await memberOf(deps, req);
      const spoken = await setReadName(deps.ctx, access.guild.id, session.userId, text(req.body.reading));
      return ok({ ...memberView(deps, access), spoken });
    }
    case 'POST /me/:id/preview': {
      const access = await memberOf(deps, req);
      const voice = text(req.body.voice).trim() || memberVoice(deps.ctx, access.guild.id, access.member.id).voice;
      return { status: 200, body: await previewMp3(deps, access, voice, req.lang), file: { name: 'preview.mp3', type: 'audio/mpeg' } };
    }
    case 'POST /me/:id/dictionary': {
      const access = await memberOf(deps, req);
      return ok(await addEntry(myStore(deps, access), req.lang, text(req.body.word), text(req.body.reading)), 201);
    }
    case 'DELETE /me/:id/dictionary': {
      const access = await memberOf(deps, req);
      return ok({ word: await removeEntry(myStore(deps, access), text(req.body.word)) });
    }
    case 'POST /me/:id/dictionary/import': {
      const access = await memberOf(deps, req);
      return importInto(myStore(deps, access), req);
    }
    case 'GET /me/:id/dictionary/export': {
      const access = await memberOf(deps, req);
      return exportOf(myStore(deps, access).own(), req.query.get('format'));
    }
    default:
      throw new ApiRefusal('not_found');
  }
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const SNOWFLAKE = /^\d{17,20}$/;

/** The signed-in member in the server of the path, or 404 (the bot or they are not there). */
async function memberOf(deps: ApiDeps, req: ApiRequest): Promise<GuildAccess> {
  const access = await accessTo(deps.view, req.segments[1] ?? '', req.session.userId);
  if (!access) throw new ApiRefusal('unknown_guild');
  return access;
}

/** memberOf, and Manage Server there as Discord says now, or 403. */
async function admin(deps: ApiDeps, req: ApiRequest): Promise<GuildAccess> {
  const access = await memberOf(deps, req);
  if (!access.manager) throw new ApiRefusal('not_manager');
  return access;
}

/** memberOf, and allowed to edit the server's dictionary (/dictionary's rule: Manage Server or the editors role), or 403. */
async function editor(deps: ApiDeps, req: ApiRequest): Promise<GuildAccess> {
  const access = await memberOf(deps, req);
  if (!isEditor(deps, access)) throw new ApiRefusal('not_manager');
  return access;
}

function isEditor(deps: ApiDeps, access: GuildAccess): boolean {
  return mayEditDictionary(deps.ctx.repos, access.guild.id, {
    manageGuild: access.manager,
    hasRole: (id) => access.member.roles.cache.has(id),
  });
}

function actor(access: GuildAccess): Actor {
  return { userId: access.member.id, name: access.member.displayName, via: 'dashboard' };
}

const serverStore = (deps: ApiDeps, access: GuildAccess) =>
  dictionaryStore(deps.ctx.repos, 'server', access.guild.id, access.member.id, actor(access));
const myStore = (deps: ApiDeps, access: GuildAccess) => dictionaryStore(deps.ctx.repos, 'me', access.guild.id, access.member.id);

/** The servers the signed-in member is in, as Discord's OAuth2 says (asked at most once a minute per session). */
async function theirGuilds(deps: ApiDeps, session: Session): Promise<DiscordUserGuild[]> {
  // Discord limits users/@me/guilds tightly.
  let theirs = guildLists.get(session);
  if (!theirs || theirs.at + GUILD_LIST_MS < Date.now()) {
    theirs = { at: Date.now(), guilds: await deps.oauth.guilds(session.accessToken) };
    guildLists.set(session, theirs);
  }
  return theirs.guilds;
}

/** Which other servers the signed-in admin is in (their OAuth2 list of servers): only those are named or offered. */
function memberFacts(deps: ApiDeps, session: Session): MemberFacts {
  return {
    async nameIfMember(guildId) {
      return (await theirGuilds(deps, session)).find((g) => g.id === guildId)?.name;
    },
  };
}

/** The servers the member shares with the bot (this process's), and whether they manage each. */
async function listGuilds(deps: ApiDeps, session: Session) {
  const shared = await Promise.all(
    (await theirGuilds(deps, session)).map(async (g) => {
      const access = await accessTo(deps.view, g.id, session.userId);
      if (access) return { id: g.id, name: access.guild.name, icon: access.guild.icon, manager: access.manager };
      // A server another host holds: where its dashboard is.
      const elsewhere = await deps.view.elsewhere(g.id);
      return elsewhere ? { id: g.id, name: g.name, icon: g.icon, manager: false, elsewhere } : undefined;
    }),
  );
  return shared.filter((g) => g !== undefined);
}

const GUILD_LIST_MS = 60_000;
const guildLists = new WeakMap<Session, { at: number; guilds: DiscordUserGuild[] }>();

/** What a server's admins see: its settings, the limits that apply, its voice channels, dictionary and audit log. */
async function adminView(deps: ApiDeps, access: GuildAccess, lang: Lang, session: Session) {
  const { repos, budget } = deps.ctx;
  const id = access.guild.id;
  const channels = await guildChannels(access.guild, access.member);
  return {
    guild: { id, name: access.guild.name },
    settings: repos.guildSettings.get(id),
    limits: budget.appliedLimits(id),
    ceilings: budget.ceilings,
    usage: await budget.usage({ guildId: id }),
    voiceChannels: channels.filter((c) => isVoiceType(c.type)),
    readableChannels: channels.filter((c) => isAutoReadable(c.type)),
    autoRead: autoReadChannels(deps.ctx, id),
    roles: [...access.guild.roles.cache.values()]
      .filter((r) => r.id !== id && !r.managed)
      .sort((a, b) => b.position - a.position)
      .map((r) => ({ id: r.id, name: r.name })),
    roleAllowances: repos.roleAllowances.list(id),
    reading: repos.reading.get(id),
    readingLists: readingLists(deps, id),
    controls: repos.controls.get(id),
    muted: mutedOf(deps, access),
    voicePool: repos.voicePool.list(id),
    volumes: volumesOf(repos, access),
    members: [...access.guild.members.cache.values()]
      .filter((m) => !m.user.bot)
      .slice(0, 500)
      .map((m) => ({ id: m.id, name: m.displayName })),
    dictionary: repos.dictionary.own(id),
    filters: filtersOf(deps.ctx, id),
    sharing: await sharingOf(deps.ctx, id, memberFacts(deps, session)),
    audit: auditOf(deps, access, lang, repos.audit.recent(id, 50), channels),
  };
}

/** Audit log entries, each with what it says in `lang` (audit-text.ts). */
function auditOf(deps: ApiDeps, access: GuildAccess, lang: Lang, entries: AuditEntry[], channels: readonly { id: string; name: string }[]) {
  const guild = access.guild;
  const names: AuditNames = {
    commands: shownNames(deps.commands, lang),
    channel: (id) => `#${channels.find((c) => c.id === id)?.name ?? id}`,
    role: (id) => `@${guild.roles.cache.get(id)?.name ?? id}`,
    member: (id) => guild.members.cache.get(id)?.displayName ?? id,
  };
  return entries.map((e) => ({ ...e, text: describeAudit(e, lang, names) }));
}

/**
 * Characters of the billing period as /usage shows them: the member's own, or for admins the
 * server's with its biggest spenders; spend per day and per text channel (named where the member
 * can view it) either way.
 */
async function usageOf(deps: ApiDeps, access: GuildAccess, server: boolean) {
  const guild = access.guild;
  const report = await usageReport(
    deps.ctx,
    server ? { guildId: guild.id } : { guildId: guild.id, userId: access.member.id },
    server ? 10 : 0,
  );
  const viewable = new Map((await guildChannels(guild, access.member)).map((c) => [c.id, c.name]));
  const nameOf = (id: string) => guild.members.cache.get(id)?.displayName ?? id;
  return {
    ...report,
    channels: spendByChannel(report.channels, viewable, (id) => guild.channels.cache.has(id)),
    top: report.top.map((s) => ({ ...s, name: nameOf(s.userId) })),
  };
}

/**
 * Each voice channel of the server read now, as /diagnose shows it to admins: its connection and
 * end-to-end encryption, the text channels it reads, what waits, and how much of its chat was heard
 * within 20 s lately. Only the sessions of this process (under the shard manager, the first
 * process's shards).
 */
function healthOf(deps: ApiDeps, access: GuildAccess) {
  // An admin who cannot view a channel sees a voice channel's row unnamed and a text channel only
  // counted, as /diagnose and the other lists show them.
  const viewable = (id: string) => {
    const channel = access.guild.channels.cache.get(id);
    return channel && memberCanView(channel, access.member) ? channel : undefined;
  };
  const now = Date.now();
  const sessions = deps.ctx.diagnosis.sessions(access.guild.id, (id) => viewable(id) !== undefined);
  return sessions.map((s) => ({
    channelId: s.channelId,
    name: viewable(s.channelId)?.name ?? null,
    textChannels: s.textChannels.shown.map((id) => ({ id, name: viewable(id)?.name ?? '' })),
    hiddenTextChannels: s.textChannels.hidden,
    main: s.main,
    connected: s.connection?.status === 'ready' && !s.suppressed,
    encrypted: s.connection?.privacyCode != null,
    waiting: s.backlog.waiting,
    oldestWaitS: s.backlog.oldestAt === null ? null : Math.max(0, Math.round((now - s.backlog.oldestAt) / 1000)),
    messages: s.health.messages,
    heardWithin: s.health.heardWithin,
    p95WaitS: s.health.p95WaitMs === null ? null : Math.round(s.health.p95WaitMs / 100) / 10,
    recoveries: s.recoveries ?? {},
  }));
}

/** The voice preview's MP3 (/voice preview's sample and payer), read once and released. */
async function previewMp3(deps: ApiDeps, access: GuildAccess, voice: string, lang: Lang): Promise<Buffer> {
  const audio = await previewAudio(deps.ctx, access.guild.id, access.member.id, voice, lang);
  try {
    if (audio.mp3) return audio.mp3;
    if (audio.mp3Path) return await readFile(audio.mp3Path);
    throw new UserError('voice.check_busy', { vars: { voice } });
  } finally {
    audio.release?.();
  }
}

/** The server's allowed bots and webhooks, and its never-read roles (ids, oldest first). */
function readingLists(deps: ApiDeps, guildId: string) {
  const lists = deps.ctx.repos.readingLists;
  return { bots: lists.list(guildId, 'bot'), neverRoles: lists.list(guildId, 'never_role') };
}

/** The server's muted members, with their names as the gateway knows them. */
function mutedOf(deps: ApiDeps, access: GuildAccess) {
  return deps.ctx.repos.userSettings
    .muted(access.guild.id)
    .map((id) => ({ id, name: access.guild.members.cache.get(id)?.displayName ?? id }));
}

/** What a member sees of themselves in one server: the voice they are read with, their name reading, their own dictionary. */
function memberView(deps: ApiDeps, access: GuildAccess) {
  return {
    guild: { id: access.guild.id, name: access.guild.name },
    manager: access.manager,
    dictionaryEditor: isEditor(deps, access),
    voice: memberVoice(deps.ctx, access.guild.id, access.member.id),
    dictionary: deps.ctx.repos.personalDictionary.own(access.member.id),
  };
}

/** An import as /dictionary import does it: checked whole; with `apply` (merge or replace) written, else only summarised. */
async function importInto(store: ReturnType<typeof dictionaryStore>, req: ApiRequest): Promise<ApiResult> {
  const name = text(req.body.name) || 'pasted.tsv';
  const checked = checkImport(req.lang, store, name, Buffer.from(text(req.body.text), 'utf8'));
  if (!checked.ok) {
    // The sentence /dictionary import answers with; the page lists the problems after it.
    const message = t(req.lang, 'dictionary.import_refused', { problems: '' }).trim();
    return { status: 400, body: { error: 'import_refused', message, problems: checked.problems } };
  }
  const mode = req.body.apply;
  if (mode !== 'merge' && mode !== 'replace') return ok({ summary: checked.summary });
  const result = await store.import(checked.entries, mode);
  if (!result.ok)
    throw new UserError(result.kind === 'patterns' ? 'dictionary.import_over_patterns' : 'dictionary.import_over_total', {
      vars: { count: result.total, max: result.max },
    });
  return ok({ summary: checked.summary, total: result.total });
}

function exportOf(entries: readonly { word: string; reading: string }[], format: string | null): ApiResult {
  const f = format === 'csv' ? 'csv' : 'json';
  return {
    status: 200,
    body: serialiseDictionary(entries, f),
    file: { name: `dictionary.${f}`, type: f === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8' },
  };
}
