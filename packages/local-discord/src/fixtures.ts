/**
 * The fake Discord's world: users, guilds, roles, channels, members, voice states, and their
 * conversion to Discord API v10 JSON shapes (https://discord.com/developers/docs/resources/guild).
 * Shapes were checked against discord.js 14.28 / discord-api-types 0.38.
 */
import { randomBytes } from 'node:crypto';
import type { APIChannel, APIGuildMember, APIRole, APIUser, GatewayVoiceState } from 'discord.js';

export interface FakeUser {
  id: string;
  username: string;
  globalName?: string | null;
  bot?: boolean;
  avatar?: string | null;
}

interface FakeRole {
  id: string;
  name: string;
  /** Permission bitfield as a decimal string, as Discord sends it. */
  permissions: string;
  position: number;
  managed?: boolean;
  /** For a bot's managed role. */
  botId?: string;
}

/** 0 = text, 2 = voice, 4 = category, 5 = announcement, 10/11/12 = announcement/public/private thread (threads.ts), 13 = stage, 15 = forum. */
export type FakeChannelType = 0 | 2 | 4 | 5 | 10 | 11 | 12 | 13 | 15;

export interface FakeChannel {
  id: string;
  name: string;
  type: FakeChannelType;
  position?: number;
  parentId?: string | null;
  /** Voice channels: how many members may be connected at once (Discord's user_limit; 0 or unset: no limit). */
  userLimit?: number;
  /** https://discord.com/developers/docs/resources/channel#overwrite-object (see permissions.ts). */
  permissionOverwrites?: FakeOverwrite[];
  /** Voice channels: the voice channel status members see under its name (stages.ts sets it). */
  status?: string | null;
  /** Threads (types 10, 11, 12): who started it, who is in it, whether it is archived (threads.ts). */
  thread?: FakeThread;
}

/** A thread's own state (https://discord.com/developers/docs/resources/channel#thread-metadata-object). */
interface FakeThread {
  ownerId: string;
  memberIds: string[];
  archived: boolean;
  locked: boolean;
  createdAt: string;
}

/** A channel's permission overwrite for a role (type 0; @everyone's id is the guild's) or a member (type 1). */
export interface FakeOverwrite {
  id: string;
  type: 0 | 1;
  /** Permission bitfields as decimal strings, as Discord sends them. */
  allow: string;
  deny: string;
}

export interface FakeMember {
  user: FakeUser;
  nick?: string | null;
  /** Role ids, without the @everyone role. */
  roles: string[];
  joinedAt?: string;
}

export interface FakeVoiceState {
  userId: string;
  channelId: string;
  sessionId: string;
  selfMute: boolean;
  selfDeaf: boolean;
  /** Stage channels: in the audience, not a speaker (stages.ts). */
  suppress?: boolean;
  /** Stage channels: when they asked to speak (ISO time), or null. */
  requestToSpeakTimestamp?: string | null;
}

export interface FakeGuild {
  id: string;
  name: string;
  ownerId: string;
  /** Must contain the @everyone role, whose id is the guild id. */
  roles: FakeRole[];
  channels: FakeChannel[];
  members: FakeMember[];
  voiceStates: FakeVoiceState[];
  preferredLocale?: string;
}

/** Discord permission bits used by the fixtures (https://discord.com/developers/docs/topics/permissions). */
export const PERMISSIONS = {
  CreateInstantInvite: 1n << 0n,
  Administrator: 1n << 3n,
  ManageChannels: 1n << 4n,
  ManageGuild: 1n << 5n,
  AddReactions: 1n << 6n,
  ViewChannel: 1n << 10n,
  SendMessages: 1n << 11n,
  ManageMessages: 1n << 13n,
  EmbedLinks: 1n << 14n,
  AttachFiles: 1n << 15n,
  ReadMessageHistory: 1n << 16n,
  MentionEveryone: 1n << 17n,
  UseExternalEmojis: 1n << 18n,
  Connect: 1n << 20n,
  Speak: 1n << 21n,
  MuteMembers: 1n << 22n,
  MoveMembers: 1n << 24n,
  UseVAD: 1n << 25n,
  ChangeNickname: 1n << 26n,
  UseApplicationCommands: 1n << 31n,
  RequestToSpeak: 1n << 32n,
  ManageThreads: 1n << 34n,
  SetVoiceChannelStatus: 1n << 48n,
} as const;

/** Every permission bit Discord currently defines (an owner or Administrator has them all). */
export const ALL_PERMISSIONS = (1n << 53n) - 1n;

/** What @everyone may do in the default world (Discord's defaults that matter to a read-aloud bot). */
const EVERYONE_PERMISSIONS =
  PERMISSIONS.CreateInstantInvite |
  PERMISSIONS.AddReactions |
  PERMISSIONS.ViewChannel |
  PERMISSIONS.SendMessages |
  PERMISSIONS.EmbedLinks |
  PERMISSIONS.AttachFiles |
  PERMISSIONS.ReadMessageHistory |
  PERMISSIONS.UseExternalEmojis |
  PERMISSIONS.Connect |
  PERMISSIONS.Speak |
  PERMISSIONS.UseVAD |
  PERMISSIONS.ChangeNickname |
  PERMISSIONS.UseApplicationCommands |
  PERMISSIONS.RequestToSpeak;

/** Fixed ids of the default world, so tests can name things without looking them up. */
export const DEFAULT_IDS = {
  application: '1200000000000000001',
  bot: '1200000000000000001',
  guild: '1100000000000000001',
  everyoneRole: '1100000000000000001',
  moderatorRole: '1100000000000000011',
  botRole: '1100000000000000012',
  general: '1100000000000000101',
  chat: '1100000000000000102',
  voice: '1100000000000000103',
  owner: '1000000000000000001',
  alice: '1000000000000000002',
  bob: '1000000000000000003',
  otherbot: '1000000000000000004',
} as const;

export const DEFAULT_BOT_USER: FakeUser = { id: DEFAULT_IDS.bot, username: 'yomiage', bot: true };

/**
 * A world's three roles: @everyone, one that manages the server (Manage Server and Manage
 * Messages, and `also`), and the bot's own managed role (Manage Messages).
 */
export function worldRoles(
  ids: { everyone: string; manager: { id: string; name: string; also?: bigint }; bot: string },
  botUser: FakeUser,
): FakeRole[] {
  return [
    { id: ids.everyone, name: '@everyone', permissions: EVERYONE_PERMISSIONS.toString(), position: 0 },
    {
      id: ids.manager.id,
      name: ids.manager.name,
      permissions: (EVERYONE_PERMISSIONS | PERMISSIONS.ManageGuild | PERMISSIONS.ManageMessages | (ids.manager.also ?? 0n)).toString(),
      position: 2,
    },
    {
      id: ids.bot,
      name: botUser.username,
      permissions: (EVERYONE_PERMISSIONS | PERMISSIONS.ManageMessages).toString(),
      position: 1,
      managed: true,
      botId: botUser.id,
    },
  ];
}

/**
 * The default world: "Test Guild" with #general, #chat, a voice channel "Voice"; members: the bot,
 * "owner" (guild owner), "alice" (no special permission), "bob" (Moderator role: Manage Guild, Move Members) and
 * "otherbot" (another bot).
 */
export function defaultGuild(botUser: FakeUser = DEFAULT_BOT_USER): FakeGuild {
  const joinedAt = '2024-01-01T00:00:00.000Z';
  return {
    id: DEFAULT_IDS.guild,
    name: 'Test Guild',
    ownerId: DEFAULT_IDS.owner,
    preferredLocale: 'ja',
    roles: worldRoles(
      {
        everyone: DEFAULT_IDS.everyoneRole,
        manager: { id: DEFAULT_IDS.moderatorRole, name: 'Moderator', also: PERMISSIONS.MoveMembers },
        bot: DEFAULT_IDS.botRole,
      },
      botUser,
    ),
    channels: [
      { id: '1100000000000000100', name: 'Text Channels', type: 4, position: 0 },
      { id: DEFAULT_IDS.general, name: 'general', type: 0, position: 0, parentId: '1100000000000000100' },
      { id: DEFAULT_IDS.chat, name: 'chat', type: 0, position: 1, parentId: '1100000000000000100' },
      { id: DEFAULT_IDS.voice, name: 'Voice', type: 2, position: 0 },
    ],
    members: [
      { user: { ...botUser, bot: true }, roles: [DEFAULT_IDS.botRole], joinedAt },
      { user: { id: DEFAULT_IDS.owner, username: 'owner', globalName: 'Owner' }, roles: [], joinedAt },
      { user: { id: DEFAULT_IDS.alice, username: 'alice', globalName: 'Alice' }, roles: [], joinedAt },
      { user: { id: DEFAULT_IDS.bob, username: 'bob', globalName: 'Bob' }, roles: [DEFAULT_IDS.moderatorRole], joinedAt },
      { user: { id: DEFAULT_IDS.otherbot, username: 'otherbot', bot: true }, roles: [], joinedAt },
    ],
    voiceStates: [],
  };
}

/**
 * Another server like the default one (same members and channel layout, ids of its own) whose
 * events go to shard `shard` of `shardCount` by Discord's formula, (guild_id >> 22) % count.
 * `index` tells apart several guilds of one shard. Its text channels are `${id}01` style ids:
 * read them from the returned guild (`channels`), not from DEFAULT_IDS.
 */
export function guildOnShard(shard: number, shardCount: number, index = 0, botUser: FakeUser = DEFAULT_BOT_USER): FakeGuild {
  // The part above bit 22 picks the shard; keep it near the default ids' timestamps.
  const count = BigInt(shardCount);
  const high = (BigInt(DEFAULT_IDS.guild) >> 22n) + 1000n;
  const aligned = high - (high % count) + BigInt(index) * count + BigInt(shard);
  const id = (aligned << 22n).toString();
  const sub = (n: number) => ((aligned << 22n) + BigInt(n)).toString();
  const base = defaultGuild(botUser);
  const renamed = new Map<string, string>([[DEFAULT_IDS.guild, id]]);
  base.channels.forEach((c, i) => renamed.set(c.id, sub(100 + i)));
  base.roles.forEach((r, i) => renamed.set(r.id, r.id === DEFAULT_IDS.guild ? id : sub(10 + i)));
  const to = (old: string) => renamed.get(old) ?? old;
  return {
    ...base,
    id,
    name: `Shard ${shard} Guild ${index}`,
    roles: base.roles.map((r) => ({ ...r, id: to(r.id) })),
    channels: base.channels.map((c) => ({ ...c, id: to(c.id), parentId: c.parentId ? to(c.parentId) : (c.parentId ?? null) })),
    members: base.members.map((m) => ({ ...m, roles: m.roles.map(to) })),
  };
}

const DISCORD_EPOCH = 1_420_070_400_000n;
let snowflakeIncrement = 0n;

/** A fresh snowflake id for the current time, unique within the process. */
export function snowflake(now = Date.now()): string {
  snowflakeIncrement = (snowflakeIncrement + 1n) & 0xfffn;
  return (((BigInt(now) - DISCORD_EPOCH) << 22n) | (1n << 17n) | snowflakeIncrement).toString();
}

/** A random token-like string (url-safe base64). */
export function randomToken(bytes = 24): string {
  return randomBytes(bytes).toString('base64url');
}

/** API user object. */
export function toAPIUser(user: FakeUser): APIUser {
  return {
    id: user.id,
    username: user.username,
    discriminator: '0',
    global_name: user.globalName ?? null,
    avatar: user.avatar ?? null,
    ...(user.bot ? { bot: true } : {}),
    public_flags: 0,
    flags: 0,
  } as unknown as APIUser; // flag fields are const enums in discord-api-types
}

/** API member object (with the user), as in GUILD_CREATE and GET /guilds/{id}/members/{user}. */
export function toAPIMember(member: FakeMember): APIGuildMember {
  return {
    user: toAPIUser(member.user),
    nick: member.nick ?? null,
    avatar: null,
    banner: null,
    roles: [...member.roles],
    joined_at: member.joinedAt ?? '2024-01-01T00:00:00.000Z',
    premium_since: null,
    deaf: false,
    mute: false,
    flags: 0,
    pending: false,
    communication_disabled_until: null,
  } as unknown as APIGuildMember;
}

/** API role object. */
export function toAPIRole(role: FakeRole): APIRole {
  return {
    id: role.id,
    name: role.name,
    color: 0,
    colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
    hoist: false,
    icon: null,
    unicode_emoji: null,
    position: role.position,
    permissions: role.permissions,
    managed: role.managed ?? false,
    mentionable: false,
    flags: 0,
    ...(role.botId ? { tags: { bot_id: role.botId } } : {}),
  } as unknown as APIRole;
}

/** API guild channel object. */
export function toAPIChannel(channel: FakeChannel, guildId: string): APIChannel {
  const base = {
    id: channel.id,
    type: channel.type,
    guild_id: guildId,
    name: channel.name,
    position: channel.position ?? 0,
    parent_id: channel.parentId ?? null,
    permission_overwrites: (channel.permissionOverwrites ?? []).map((o) => ({ ...o })),
    flags: 0,
  };
  if (channel.type === 2 || channel.type === 13) {
    return {
      ...base,
      bitrate: 64_000,
      user_limit: channel.userLimit ?? 0,
      ...(channel.type === 2 ? { status: channel.status ?? null } : {}),
      rtc_region: null,
      nsfw: false,
      last_message_id: null,
      rate_limit_per_user: 0,
    } as APIChannel;
  }
  if (channel.type === 4) return base as APIChannel;
  if (channel.thread) return threadChannel(channel, channel.thread, guildId);
  if (channel.type === 15)
    return {
      ...base,
      topic: null,
      nsfw: false,
      available_tags: [],
      default_reaction_emoji: null,
      default_sort_order: null,
      default_forum_layout: 0,
      rate_limit_per_user: 0,
      last_message_id: null,
    } as APIChannel;
  return { ...base, topic: null, nsfw: false, last_message_id: null, rate_limit_per_user: 0 } as APIChannel;
}

/** A thread channel object: no overwrites of its own (its parent's apply), with thread_metadata. */
function threadChannel(channel: FakeChannel, thread: FakeThread, guildId: string): APIChannel {
  return {
    id: channel.id,
    type: channel.type,
    guild_id: guildId,
    name: channel.name,
    parent_id: channel.parentId ?? null,
    owner_id: thread.ownerId,
    last_message_id: null,
    rate_limit_per_user: 0,
    message_count: 0,
    member_count: Math.min(thread.memberIds.length, 50),
    total_message_sent: 0,
    flags: 0,
    thread_metadata: {
      archived: thread.archived,
      auto_archive_duration: 1440,
      archive_timestamp: thread.createdAt,
      locked: thread.locked,
      create_timestamp: thread.createdAt,
      ...(channel.type === 12 ? { invitable: true } : {}),
    },
  } as unknown as APIChannel;
}

/** Voice state as it appears inside GUILD_CREATE (no guild_id, no member). */
export function toAPIVoiceState(
  state: Omit<FakeVoiceState, 'channelId'> & { channelId: string | null },
  guildId?: string,
): GatewayVoiceState {
  return {
    ...(guildId ? { guild_id: guildId } : {}),
    user_id: state.userId,
    channel_id: state.channelId,
    session_id: state.sessionId,
    deaf: false,
    mute: false,
    self_deaf: state.selfDeaf,
    self_mute: state.selfMute,
    self_video: false,
    suppress: state.suppress ?? false,
    request_to_speak_timestamp: state.requestToSpeakTimestamp ?? null,
  } as GatewayVoiceState;
}

/** VOICE_STATE_UPDATE's payload: a voice state in `guildId` (channel null once they left), with the member. */
export function voiceStateUpdate(
  guildId: string,
  state: Omit<FakeVoiceState, 'channelId'> & { channelId: string | null },
  member: FakeMember | undefined,
): Record<string, unknown> {
  return { ...toAPIVoiceState(state, guildId), ...(member ? { member: toAPIMember(member) } : {}) };
}

/** API guild object without the gateway-only fields. */
export function toAPIGuild(guild: FakeGuild): Record<string, unknown> {
  return {
    id: guild.id,
    name: guild.name,
    icon: null,
    icon_hash: null,
    splash: null,
    discovery_splash: null,
    owner_id: guild.ownerId,
    region: 'japan',
    afk_channel_id: null,
    afk_timeout: 300,
    verification_level: 0,
    default_message_notifications: 1,
    explicit_content_filter: 0,
    roles: guild.roles.map(toAPIRole),
    emojis: [],
    stickers: [],
    features: [],
    mfa_level: 0,
    application_id: null,
    system_channel_id: null,
    system_channel_flags: 0,
    rules_channel_id: null,
    vanity_url_code: null,
    description: null,
    banner: null,
    premium_tier: 0,
    premium_subscription_count: 0,
    preferred_locale: guild.preferredLocale ?? 'en-US',
    public_updates_channel_id: null,
    safety_alerts_channel_id: null,
    nsfw_level: 0,
    premium_progress_bar_enabled: false,
    max_video_channel_users: 25,
    max_stage_video_channel_users: 50,
    hub_type: null,
    incidents_data: null,
  };
}

/** The member's guild-wide permissions (roles OR-ed; owner and Administrator get everything). */
export function memberPermissions(guild: FakeGuild, userId: string): bigint {
  if (guild.ownerId === userId) return ALL_PERMISSIONS;
  const member = guild.members.find((m) => m.user.id === userId);
  const roleIds = new Set([guild.id, ...(member?.roles ?? [])]);
  let bits = 0n;
  for (const role of guild.roles) if (roleIds.has(role.id)) bits |= BigInt(role.permissions);
  return bits & PERMISSIONS.Administrator ? ALL_PERMISSIONS : bits;
}

/** Looks a channel up across guilds. */
export function findChannel(guilds: readonly FakeGuild[], channelId: string): { guild: FakeGuild; channel: FakeChannel } | undefined {
  for (const guild of guilds) {
    const channel = guild.channels.find((c) => c.id === channelId);
    if (channel) return { guild, channel };
  }
  return undefined;
}
