import {
  FRESH_SECONDS,
  READING_LIST_MAX,
  type BotReading,
  type ReadingListKind,
  type ReadingSettings,
  type AutoReadChannel,
  type ReadingSettingsPatch,
} from '../domain/reading.ts';
import { type Actor } from '../domain/audit.ts';
import type { UseCaseDeps } from './deps.ts';
import { UserError } from '../i18n/errors.ts';

// Whose messages and what is read, changed by an admin: one rule for /reading's switches, its bot
// mode, its required role, its freshness horizon and its two lists (allowed bots, never-read roles),
// and for the web dashboard (the caller has checked Manage Server). Each change is audit-logged.

/** What may change at once (absent keeps its value). */
export type ReadingChange = Pick<
  ReadingSettingsPatch,
  'bots' | 'forwards' | 'emoji' | 'requireInVoice' | 'staleNotice' | 'threads' | 'speedUp' | 'requiredRoleId' | 'freshSeconds'
>;

/** Each field by its /reading subcommand (how the audit log names it). */
export const READING_SUBCOMMANDS: Record<keyof ReadingChange, string> = {
  bots: 'bots',
  forwards: 'forwards',
  emoji: 'emoji',
  requireInVoice: 'in-voice',
  staleNotice: 'stale-notice',
  threads: 'threads',
  speedUp: 'speed-up',
  requiredRoleId: 'required-role',
  freshSeconds: 'freshness',
};

const SWITCH_FIELDS = ['forwards', 'emoji', 'requireInVoice', 'staleNotice', 'threads', 'speedUp'] as const;
const BOT_READING: readonly BotReading[] = ['off', 'listed', 'all'];

/**
 * Checks `change` whole, then saves and records it. `roleExists` says whether a role id is a role
 * of this server now (not @everyone, which the caller refuses by the guild's id).
 */
export async function changeReading(
  ctx: Pick<UseCaseDeps, 'repos'>,
  guildId: string,
  actor: Actor,
  change: ReadingChange,
  roleExists: (roleId: string) => boolean,
): Promise<ReadingSettings> {
  const patch: ReadingChange = {};
  for (const field of SWITCH_FIELDS) {
    const value: unknown = change[field];
    if (value === undefined) continue;
    if (typeof value !== 'boolean') throw new UserError('config.not_on_off', { vars: { setting: field } });
    patch[field] = value;
  }
  if (change.bots !== undefined) {
    const value: unknown = change.bots;
    if (!BOT_READING.includes(value as BotReading))
      throw new UserError('reading.bad_bots', { vars: { value: String(value).slice(0, 20) } });
    patch.bots = value as BotReading;
  }
  if (change.requiredRoleId !== undefined) {
    const id: unknown = change.requiredRoleId;
    if (id === guildId) throw new UserError('reading.role_everyone');
    if (id !== null && (typeof id !== 'string' || !roleExists(id))) throw new UserError('reading.role_gone');
    patch.requiredRoleId = id;
  }
  if (change.freshSeconds !== undefined) {
    const seconds: unknown = change.freshSeconds;
    if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < FRESH_SECONDS.min || seconds > FRESH_SECONDS.max)
      throw new UserError('reading.bad_fresh', { vars: { min: FRESH_SECONDS.min, max: FRESH_SECONDS.max } });
    patch.freshSeconds = seconds;
  }
  const saved = await ctx.repos.reading.update(guildId, patch);
  if (Object.keys(patch).length > 0) await ctx.repos.audit.record(guildId, actor, 'reading', patch);
  return saved;
}

/** What the caller knows of the server now, to check a list change against. */
export interface ListChecks {
  /** A role of this server now (not @everyone, refused by the guild's id). */
  roleExists: (roleId: string) => boolean;
  /** The bot's own user id, never listed. */
  selfId: string;
  /** Whether a user id is known to be a member who is not a bot (undefined: not known, e.g. a webhook). */
  isHuman: (userId: string) => boolean;
}

/** A bot or webhook id from what an admin typed: a snowflake or a user mention. */
function parseBotId(raw: unknown): string {
  const m = typeof raw === 'string' ? /^\s*(?:<@!?(\d{17,20})>|(\d{17,20}))\s*$/.exec(raw) : null;
  const id = m?.[1] ?? m?.[2];
  if (!id) throw new UserError('reading.bad_id');
  return id;
}

const LIST_ACTIONS = { bot: 'reading.bot', never_role: 'reading.never_role' } as const;

/**
 * Adds an id to, or removes it from, one of the server's reading lists: an allowed bot or webhook
 * (typed as an id or mention) or a never-read role. Refused when the role does not exist, the bot
 * is this bot or a member, the list is full (READING_LIST_MAX), or the id to remove is not listed.
 * Resolves 'added', 'exists' or 'removed' with the id; a change is audit-logged.
 */
export async function changeReadingList(
  ctx: Pick<UseCaseDeps, 'repos'>,
  guildId: string,
  actor: Actor,
  kind: ReadingListKind,
  typed: unknown,
  adding: boolean,
  checks: ListChecks,
): Promise<{ id: string; result: 'added' | 'exists' | 'removed' }> {
  const lists = ctx.repos.readingLists;
  let id: string;
  if (kind === 'bot') {
    id = parseBotId(typed);
    if (adding && id === checks.selfId) throw new UserError('reading.bot_self');
    if (adding && checks.isHuman(id)) throw new UserError('reading.not_a_bot', { vars: { id } });
  } else {
    if (typed === guildId) throw new UserError('reading.role_everyone');
    if (typeof typed !== 'string' || (adding && !checks.roleExists(typed))) throw new UserError('reading.role_gone');
    id = typed;
  }
  const detailKey = kind === 'bot' ? 'botId' : 'roleId';
  if (!adding) {
    if (!(await lists.remove(guildId, kind, id))) {
      if (kind === 'bot') throw new UserError('reading.bot_not_listed', { vars: { id } });
      throw new UserError('reading.role_not_listed', { vars: { role: `<@&${id}>` } });
    }
    await ctx.repos.audit.record(guildId, actor, `${LIST_ACTIONS[kind]}.remove`, { [detailKey]: id });
    return { id, result: 'removed' };
  }
  const result = await lists.add(guildId, kind, id);
  if (result === 'full') throw new UserError('reading.list_full', { vars: { max: READING_LIST_MAX } });
  if (result === 'added') await ctx.repos.audit.record(guildId, actor, `${LIST_ACTIONS[kind]}.add`, { [detailKey]: id });
  return { id, result };
}

// The server's auto-read channels, changed by an admin through /autoread or the dashboard.

/**
 * Reads `channel` automatically (with MP3s posted while the bot is in no voice channel when
 * `postAudio`). `readable` says whether it is a channel of this server of a kind /autoread offers
 * (src/discord/channels.ts, as the caller sees it): anything else is refused, nothing changed.
 */
export async function addAutoRead(
  ctx: Pick<UseCaseDeps, 'repos'>,
  guildId: string,
  actor: Actor,
  channel: { id: string; readable: boolean },
  postAudio: boolean,
): Promise<void> {
  if (!channel.readable) throw new UserError('autoread.bad_channel');
  await ctx.repos.autoRead.add(guildId, channel.id, { postAudio });
  await ctx.repos.audit.record(guildId, actor, 'autoread.add', { channelId: channel.id, postAudio });
}

/** Stops reading `channelId` automatically; refused when it was not read. */
export async function removeAutoRead(ctx: Pick<UseCaseDeps, 'repos'>, guildId: string, actor: Actor, channelId: string): Promise<void> {
  if (!(await ctx.repos.autoRead.remove(guildId, channelId)))
    throw new UserError('autoread.not_listed', { vars: { channel: `<#${channelId}>` } });
  await ctx.repos.audit.record(guildId, actor, 'autoread.remove', { channelId });
}

/** The server's auto-read channels. */
export function autoReadChannels(ctx: Pick<UseCaseDeps, 'repos'>, guildId: string): AutoReadChannel[] {
  return ctx.repos.autoRead.entries(guildId);
}
