import type { Actor } from '../domain/audit.ts';
import { CURATED_NAME, MAX_FOLLOWS, type FollowedSource } from '../domain/shared-dictionaries.ts';
import { UserError } from '../i18n/errors.ts';
import { t, type Lang } from '../i18n/texts.ts';
import type { UseCaseDeps } from './deps.ts';

// Dictionaries shared between servers, changed by a server's admins: one rule for /dictionary
// share, follow and unfollow and for the web dashboard (the caller has checked Manage Server). A
// server follows another's dictionary only while that server's admins let others follow it, or a
// curated list the operator publishes. Servers are offered, and named, only to an admin who is a
// member of them: by its id one may follow a server one is not in (its admins chose to share), and
// a refusal never says whether a server exists, has the bot, or shares.

/** What the caller knows of the admin on Discord now. */
export interface MemberFacts {
  /** The server's name when the admin is a member of it (as Discord says now); undefined when not, or not known. */
  nameIfMember(guildId: string): Promise<string | undefined>;
}

/** A followed or followable dictionary as it is shown: a server named only to its members. */
interface SharedSource extends FollowedSource {
  /** The server's name (only when the admin is in it), or the list's name. */
  name: string | null;
}

const SNOWFLAKE = /^\d{17,20}$/;

/**
 * What an admin typed or picked: "curated:<name>" or a curated list's name, "guild:<id>" or a
 * server's id. Anything else is refused with what to write.
 */
function parseSource(ctx: Pick<UseCaseDeps, 'repos'>, typed: unknown): FollowedSource {
  const text = typeof typed === 'string' ? typed.trim() : '';
  const [kind, rest] = text.includes(':') ? [text.slice(0, text.indexOf(':')), text.slice(text.indexOf(':') + 1)] : ['', text];
  if ((kind === 'guild' || kind === '') && SNOWFLAKE.test(rest)) return { kind: 'guild', source: rest };
  const name = rest.toLowerCase();
  if ((kind === 'curated' || kind === '') && CURATED_NAME.test(name)) {
    if (!ctx.repos.dictionary.hasCurated(name)) throw new UserError('dictionary.follow_unknown_list', { vars: { name } });
    return { kind: 'curated', source: name };
  }
  throw new UserError('dictionary.follow_bad_source');
}

/** Lets other servers follow this server's dictionary, or stops it (their reading stops using it at once). */
export async function setSharing(ctx: Pick<UseCaseDeps, 'repos'>, guildId: string, actor: Actor, on: unknown): Promise<boolean> {
  if (typeof on !== 'boolean') throw new UserError('config.not_on_off', { vars: { setting: 'share' } });
  await ctx.repos.sharing.setFollowable(guildId, on);
  await ctx.repos.audit.record(guildId, actor, 'dictionary.sharing', { followable: on });
  return on;
}

/**
 * Follows another server's dictionary (while it shares it) or a curated list, read under the
 * server's own entries from the next message on. Refused: the server itself, one that does not
 * share (said the same way as one unknown), a list that does not exist, one already followed, and
 * more than MAX_FOLLOWS. Resolves with the source as shown to this admin.
 */
export async function followDictionary(
  ctx: Pick<UseCaseDeps, 'repos'>,
  guildId: string,
  actor: Actor,
  typed: unknown,
  facts: MemberFacts,
): Promise<SharedSource> {
  const followed = parseSource(ctx, typed);
  if (followed.kind === 'guild') {
    if (followed.source === guildId) throw new UserError('dictionary.follow_self');
    if (!ctx.repos.sharing.isFollowable(followed.source))
      throw new UserError('dictionary.follow_unavailable', { vars: { id: followed.source } });
  }
  const result = await ctx.repos.sharing.follow(guildId, followed, actor.userId);
  if (result === 'full') throw new UserError('dictionary.follow_full', { vars: { max: MAX_FOLLOWS } });
  if (result === 'exists')
    throw followed.kind === 'guild'
      ? new UserError('dictionary.follow_exists_guild', { vars: { id: followed.source } })
      : new UserError('dictionary.follow_exists_curated', { vars: { name: followed.source } });
  const shown = await named(followed, facts);
  await ctx.repos.audit.record(guildId, actor, 'dictionary.follow', { ...followed });
  return shown;
}

/** Stops following; refused when it was not followed. */
export async function unfollowDictionary(
  ctx: Pick<UseCaseDeps, 'repos'>,
  guildId: string,
  actor: Actor,
  typed: unknown,
  facts: MemberFacts,
): Promise<SharedSource> {
  // A curated list removed since is still unfollowed by its name.
  const text = typeof typed === 'string' ? typed.trim() : '';
  const followed = ctx.repos.sharing.follows(guildId).find((f) => `${f.kind}:${f.source}` === text || f.source === text.toLowerCase());
  if (!followed) throw new UserError('dictionary.follow_not_found', { vars: { source: text.slice(0, 60) } });
  await ctx.repos.sharing.unfollow(guildId, followed);
  await ctx.repos.audit.record(guildId, actor, 'dictionary.unfollow', { kind: followed.kind, source: followed.source });
  return named(followed, facts);
}

/** What the dashboard and /dictionary follows show: sharing on or off, what is followed (and whether it is read now), what could be. */
interface SharingView {
  followable: boolean;
  max: number;
  follows: (SharedSource & { active: boolean })[];
  /** Servers that share and that the admin is in (not this one, not followed yet), and the curated lists not followed yet. */
  available: SharedSource[];
}

export async function sharingOf(ctx: Pick<UseCaseDeps, 'repos'>, guildId: string, facts: MemberFacts): Promise<SharingView> {
  const { sharing, dictionary } = ctx.repos;
  const follows = sharing.follows(guildId);
  const followedKeys = new Set(follows.map((f) => `${f.kind}:${f.source}`));
  const shownFollows = await Promise.all(
    follows.map(async (f) => ({
      ...(await named(f, facts)),
      active: f.kind === 'guild' ? sharing.isFollowable(f.source) : dictionary.hasCurated(f.source),
    })),
  );
  const servers = await Promise.all(
    sharing
      .followableGuilds()
      .filter((id) => id !== guildId && !followedKeys.has(`guild:${id}`))
      .map(async (id) => ({ kind: 'guild' as const, source: id, name: (await facts.nameIfMember(id)) ?? null })),
  );
  const lists = dictionary
    .curatedNames()
    .filter((name) => !followedKeys.has(`curated:${name}`))
    .map((name) => ({ kind: 'curated' as const, source: name, name }));
  return {
    followable: sharing.isFollowable(guildId),
    max: MAX_FOLLOWS,
    follows: shownFollows.map(({ kind, source, name, active }) => ({ kind, source, name, active })),
    // Never a server the admin is not in.
    available: [...servers.filter((s) => s.name !== null), ...lists],
  };
}

async function named(f: FollowedSource, facts: MemberFacts): Promise<SharedSource> {
  return { kind: f.kind, source: f.source, name: f.kind === 'curated' ? f.source : ((await facts.nameIfMember(f.source)) ?? null) };
}

/** A source as a reply names it: a server by its name to its members (else by id), a curated list by its name. */
export function sourceLabel(lang: Lang, s: SharedSource): string {
  if (s.kind === 'curated') return t(lang, 'dictionary.source_curated', { name: s.source });
  return s.name === null
    ? t(lang, 'dictionary.source_guild', { id: s.source })
    : t(lang, 'dictionary.source_guild_named', { name: s.name, id: s.source });
}
