/**
 * What the local gateway sends about the world: READY, GUILD_CREATE and GUILD_MEMBERS_CHUNK
 * (https://discord.com/developers/docs/events/gateway-events), and the intents that shape them.
 */
import { toAPIChannel, toAPIGuild, toAPIMember, toAPIUser, toAPIVoiceState, type FakeGuild, type FakeUser } from './fixtures.ts';

/** Gateway intents the local Discord checks (https://discord.com/developers/docs/events/gateway#gateway-intents). */
export const INTENTS = {
  Guilds: 1 << 0,
  GuildMembers: 1 << 1,
  GuildModeration: 1 << 2,
  GuildVoiceStates: 1 << 7,
  GuildPresences: 1 << 8,
  GuildMessages: 1 << 9,
  DirectMessages: 1 << 12,
  MessageContent: 1 << 15,
} as const;

/** READY: the bot user, its guilds (unavailable until their GUILD_CREATE) and where to resume. */
export function readyPayload(
  sessionId: string,
  world: { botUser: FakeUser; applicationId: string; guilds: readonly FakeGuild[]; shard: [number, number]; resumeUrl: string },
): Record<string, unknown> {
  return {
    v: 10,
    user: { ...toAPIUser(world.botUser), bot: true, verified: true, mfa_enabled: false, email: null },
    guilds: world.guilds.map((g) => ({ id: g.id, unavailable: true })),
    session_id: sessionId,
    session_type: 'normal',
    resume_gateway_url: world.resumeUrl,
    application: { id: world.applicationId, flags: 0 },
    shard: world.shard,
    user_settings: {},
    relationships: [],
    private_channels: [],
    presences: [],
    guild_join_requests: [],
    geo_ordered_rtc_regions: ['japan'],
    _trace: ['["fake-discord",{"micros":0}]'],
  };
}

/**
 * GUILD_CREATE payload. Without the GuildPresences intent Discord lists only the bot and members
 * in voice channels (https://discord.com/developers/docs/events/gateway-events#guild-create);
 * the rest come from op 8 or from the member objects on messages and interactions.
 */
export function guildCreatePayload(guild: FakeGuild, intents: number, botUserId: string): Record<string, unknown> {
  const inVoice = new Set(guild.voiceStates.map((v) => v.userId));
  const members =
    intents & INTENTS.GuildPresences ? guild.members : guild.members.filter((m) => m.user.id === botUserId || inVoice.has(m.user.id));
  return {
    ...toAPIGuild(guild),
    joined_at: '2024-01-01T00:00:00.000Z',
    large: false,
    unavailable: false,
    member_count: guild.members.length,
    members: members.map(toAPIMember),
    // Active threads come in `threads`, not `channels`.
    channels: guild.channels.filter((c) => !c.thread).map((c) => toAPIChannel(c, guild.id)),
    threads: guild.channels.filter((c) => c.thread && !c.thread.archived).map((c) => toAPIChannel(c, guild.id)),
    presences: [],
    voice_states: intents & INTENTS.GuildVoiceStates ? guild.voiceStates.map((v) => toAPIVoiceState(v)) : [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
    embedded_activities: [],
    activity_instances: [],
    application_command_counts: {},
    lazy: true,
  };
}

/** The answer to op 8 Request Guild Members: by ids, or by a name prefix, in one chunk. */
export function membersChunkPayload(guild: FakeGuild, d: Record<string, unknown>): Record<string, unknown> {
  const query = typeof d.query === 'string' ? d.query.toLowerCase() : '';
  const limit = typeof d.limit === 'number' && d.limit > 0 ? d.limit : Number.POSITIVE_INFINITY;
  const ids = Array.isArray(d.user_ids) ? d.user_ids.map(String) : typeof d.user_ids === 'string' ? [d.user_ids] : undefined;
  const members = guild.members
    .filter((m) =>
      ids ? ids.includes(m.user.id) : m.user.username.toLowerCase().startsWith(query) || (m.nick ?? '').toLowerCase().startsWith(query),
    )
    .slice(0, limit);
  const notFound = ids ? ids.filter((id) => !guild.members.some((m) => m.user.id === id)) : [];
  return {
    guild_id: guild.id,
    members: members.map(toAPIMember),
    chunk_index: 0,
    chunk_count: 1,
    not_found: notFound,
    ...(d.nonce !== undefined ? { nonce: d.nonce } : {}),
  };
}
