import {
  ChannelType,
  PermissionFlagsBits,
  RESTJSONErrorCodes,
  Routes,
  type APIPartialGuild,
  type Client,
  type Guild,
  type GuildMember,
} from 'discord.js';
import { memberCanView } from '../discord/audience/visibility.ts';

// Who may see and change what, as the bot sees it on Discord (never what a cookie or the browser
// claims). The gateway keeps what this process knows up to date (the Server Members intent sends
// every role change, GUILD_ROLE_UPDATE every permission change), so the dashboard asks Discord only
// for what it does not hold, and never about a server the bot is not in: answers Discord refuses
// (401, 403, 429) count towards its ban of the bot's address (10,000 in 10 minutes cuts every
// server off for an hour), and a signed-in browser can name any id in a URL.

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
  /** The member as the gateway keeps them (fetched once when it does not), or null when they are not in the server. */
  member(guild: Guild, userId: string): Promise<GuildMember | null>;
}

export const VIEW_DEFAULTS = {
  /** At most one listing of the bot's servers (for shards other processes or hosts run) this often. */
  listEveryMs: 60_000,
  /** How long a server another process of this host runs, fetched over REST, is used as fetched (no gateway updates it here). */
  remoteMs: 15_000,
  /** How long "not a member of that server" is believed (someone who joins meanwhile arrives through the gateway). */
  absentMs: 60_000,
  /** Entries of each of those memories before the oldest are forgotten. */
  maxEntries: 10_000,
  now: (): number => performance.now(),
} as const;

type ViewOptions = { -readonly [K in keyof typeof VIEW_DEFAULTS]?: (typeof VIEW_DEFAULTS)[K] };

/**
 * The bot's view through its discord.js client: the gateway's guilds and members, a member not
 * yet held fetched once and kept (the gateway updates them from then on). Under the shard manager
 * one process serves the dashboard for the whole host: a guild of a shard another process of this
 * host runs is fetched over REST, only if the bot's list of servers names it.
 */
export function clientView(
  client: Client,
  host: { shardCount: number; shards: readonly number[] } | undefined,
  peers: readonly { shards: readonly number[]; url: string }[] = [],
  options: ViewOptions = {},
): BotView {
  const o = { ...VIEW_DEFAULTS, ...options };
  const shards = client.options.shards;
  const own = new Set(typeof shards === 'number' ? [shards] : Array.isArray(shards) ? shards : [0]);
  const onHost = new Set(host?.shards ?? []);
  const listed = new BotGuildList(client, o.listEveryMs, o.now);
  const remote = new Expiring<Guild>(o.maxEntries, o.now);
  const absent = new Expiring<true>(o.maxEntries, o.now);
  return {
    async guild(guildId) {
      const cached = client.guilds.cache.get(guildId);
      if (cached || !host) return cached;
      const shard = shardOf(guildId, host.shardCount);
      if (own.has(shard) || !onHost.has(shard)) return undefined;
      const kept = remote.get(guildId);
      if (kept) return kept;
      if (!(await listed.has(guildId))) return undefined;
      const guild = await client.guilds.fetch({ guild: guildId, cache: false, withCounts: false }).catch(() => undefined);
      if (guild) remote.set(guildId, guild, o.remoteMs);
      else listed.forget(guildId);
      return guild;
    },
    async elsewhere(guildId) {
      if (!host || !/^\d{5,25}$/.test(guildId)) return undefined;
      const shard = shardOf(guildId, host.shardCount);
      const peer = onHost.has(shard) ? undefined : peers.find((p) => p.shards.includes(shard));
      // The bot's list of servers holds every guild it is in, whichever host's gateway holds it.
      return peer && (await listed.has(guildId)) ? peer.url : undefined;
    },
    async member(guild, userId) {
      const cached = guild.members.cache.get(userId);
      if (cached) return cached;
      const key = `${guild.id}:${userId}`;
      if (absent.get(key)) return null;
      try {
        return await guild.members.fetch({ user: userId, cache: true });
      } catch (error) {
        // Unknown Member or Unknown User: remembered a while; anything else (Discord not answering) is not.
        const code = (error as { code?: unknown }).code;
        if (code === RESTJSONErrorCodes.UnknownMember || code === RESTJSONErrorCodes.UnknownUser) absent.set(key, true, o.absentMs);
        return null;
      }
    },
  };
}

/**
 * The ids of every server the bot is in (GET users/@me/guilds as the bot, 200 a page), listed
 * again at most once per `everyMs` when asked: what tells a server of another process or host
 * from an id nobody should ask Discord about.
 */
class BotGuildList {
  readonly #client: Client;
  readonly #everyMs: number;
  readonly #now: () => number;
  #ids = new Set<string>();
  #listedAt = -Infinity;
  #listing: Promise<void> | undefined;

  constructor(client: Client, everyMs: number, now: () => number) {
    this.#client = client;
    this.#everyMs = everyMs;
    this.#now = now;
  }

  async has(guildId: string): Promise<boolean> {
    // Questions asked while a listing runs wait for it (they would read the old list otherwise).
    if (!this.#listing && this.#now() - this.#listedAt >= this.#everyMs)
      this.#listing = this.#list().finally(() => (this.#listing = undefined));
    if (this.#listing) await this.#listing;
    return this.#ids.has(guildId);
  }

  /** A guild Discord no longer answers for: not asked about again until the next listing names it. */
  forget(guildId: string): void {
    this.#ids.delete(guildId);
  }

  async #list(): Promise<void> {
    this.#listedAt = this.#now();
    const ids = new Set<string>();
    let after = '0';
    try {
      for (;;) {
        const page = (await this.#client.rest.get(Routes.userGuilds(), {
          query: new URLSearchParams({ limit: '200', after }),
        })) as APIPartialGuild[];
        for (const g of page) ids.add(g.id);
        if (page.length < 200) break;
        after = page.at(-1)!.id;
      }
      this.#ids = ids;
    } catch {
      // Discord did not answer: the last list stands until the next try.
    }
  }
}

/** A bounded memory whose entries expire. */
class Expiring<V> {
  readonly #max: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, { value: V; until: number }>();

  constructor(max: number, now: () => number) {
    this.#max = max;
    this.#now = now;
  }

  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.until > this.#now()) return entry.value;
    this.#entries.delete(key);
    return undefined;
  }

  set(key: string, value: V, forMs: number): void {
    if (this.#entries.size >= this.#max) {
      const now = this.#now();
      for (const [k, e] of this.#entries) if (e.until <= now) this.#entries.delete(k);
      for (const k of this.#entries.keys()) {
        if (this.#entries.size < this.#max) break;
        this.#entries.delete(k);
      }
    }
    this.#entries.set(key, { value, until: this.#now() + forMs });
  }
}

/** The shard of a guild (Discord's formula). */
function shardOf(guildId: string, shardCount: number): number {
  return Number((BigInt(guildId) >> 22n) % BigInt(shardCount));
}

/** The member's access to a server, or undefined when the bot or the member is not in it. */
export async function accessTo(view: BotView, guildId: string, userId: string): Promise<GuildAccess | undefined> {
  if (!/^\d{5,25}$/.test(guildId)) return undefined;
  const guild = await view.guild(guildId);
  if (!guild) return undefined;
  const member = await view.member(guild, userId);
  if (!member) return undefined;
  return { guild, member, manager: member.permissions.has(PermissionFlagsBits.ManageGuild) };
}

/** A channel of the server as the page lists it. */
interface ChannelInfo {
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
