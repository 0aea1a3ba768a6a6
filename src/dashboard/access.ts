import { ChannelType, PermissionFlagsBits, type Client, type Guild, type GuildMember } from 'discord.js';
import { memberCanView } from '../discord/events/visibility.ts';

// Who may see and change what, as the bot sees it on Discord (never what a cookie or the browser
// claims): the member is fetched from Discord for every request, so a role taken away a moment ago
// counts at once, and Manage Server is computed from their roles as Discord's permissions are.

/** A server the bot is in, with the signed-in member as Discord says they are there. */
export interface GuildAccess {
  guild: Guild;
  member: GuildMember;
  /** Manage Server (or Administrator, or owner) in that server. */
  manager: boolean;
}

/** Which servers this process answers for: the guilds of the shards this host runs. */
export interface BotView {
  /** The guild, when the bot is in it and its shard runs on this host. */
  guild(guildId: string): Promise<Guild | undefined>;
  /** Another host's dashboard (DASHBOARD_PEERS) when the bot is in this server and that host runs its shard. */
  elsewhere(guildId: string): Promise<string | undefined>;
  /** The member fetched from Discord now (`fresh`, the default) or as the gateway keeps them, or null when they are not in the server. */
  member(guild: Guild, userId: string, fresh?: boolean): Promise<GuildMember | null>;
}

/**
 * The bot's view through its discord.js client: the gateway's guilds, members fetched fresh over
 * REST. Under the shard manager one process serves the dashboard for the whole host: a guild of a
 * shard another process of this host runs is fetched over REST (not cached here).
 */
export function clientView(
  client: Client,
  host: { shardCount: number; shards: readonly number[] } | undefined,
  peers: readonly { shards: readonly number[]; url: string }[] = [],
): BotView {
  const shards = client.options.shards;
  const own = new Set(typeof shards === 'number' ? [shards] : Array.isArray(shards) ? shards : [0]);
  const onHost = new Set(host?.shards ?? []);
  return {
    async guild(guildId) {
      const cached = client.guilds.cache.get(guildId);
      if (cached || !host) return cached;
      const shard = shardOf(guildId, host.shardCount);
      if (own.has(shard) || !onHost.has(shard)) return undefined;
      return client.guilds.fetch({ guild: guildId, cache: false, withCounts: false }).catch(() => undefined);
    },
    async elsewhere(guildId) {
      if (!host || !/^\d{5,25}$/.test(guildId)) return undefined;
      const shard = shardOf(guildId, host.shardCount);
      const peer = onHost.has(shard) ? undefined : peers.find((p) => p.shards.includes(shard));
      if (!peer) return undefined;
      // Discord answers for any guild the bot is in, whichever host's gateway holds it.
      const present = await client.guilds.fetch({ guild: guildId, cache: false, withCounts: false }).then(
        () => true,
        () => false,
      );
      return present ? peer.url : undefined;
    },
    async member(guild, userId, fresh = true) {
      const cached = fresh ? undefined : guild.members.cache.get(userId);
      return cached ?? guild.members.fetch({ user: userId, force: true, cache: false }).catch(() => null);
    },
  };
}

/** The shard of a guild (Discord's formula). */
function shardOf(guildId: string, shardCount: number): number {
  return Number((BigInt(guildId) >> 22n) % BigInt(shardCount));
}

/** The member's access to a server, or undefined when the bot or the member is not in it. */
export async function accessTo(
  view: BotView,
  guildId: string,
  userId: string,
  options: { fresh?: boolean } = {},
): Promise<GuildAccess | undefined> {
  if (!/^\d{5,25}$/.test(guildId)) return undefined;
  const guild = await view.guild(guildId);
  if (!guild) return undefined;
  const member = await view.member(guild, userId, options.fresh ?? true);
  if (!member) return undefined;
  return { guild, member, manager: member.permissions.has(PermissionFlagsBits.ManageGuild) };
}

/** A channel of the server as the page lists it. */
export interface ChannelInfo {
  id: string;
  name: string;
  type: ChannelType;
}

/**
 * The server's channels `member` can view, in Discord's order (fetched for a guild another process
 * holds): what Discord's own channel pickers offer them, so the page neither names a channel they
 * cannot see nor accepts one for a setting.
 */
export async function guildChannels(guild: Guild, member: GuildMember): Promise<ChannelInfo[]> {
  const channels = guild.channels.cache.size > 0 ? [...guild.channels.cache.values()] : [...(await guild.channels.fetch()).values()];
  return channels
    .filter((c): c is NonNullable<typeof c> => c !== null && memberCanView(c, member))
    .sort((a, b) => ('position' in a && 'position' in b ? a.position - b.position : 0))
    .map((c) => ({ id: c.id, name: c.name, type: c.type }));
}

/** Voice and stage channels (where auto-join may go). */
export function isVoiceType(type: ChannelType): boolean {
  return type === ChannelType.GuildVoice || type === ChannelType.GuildStageVoice;
}
