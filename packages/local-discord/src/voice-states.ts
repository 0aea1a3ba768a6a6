/**
 * The bot's own voice state (gateway op 4): joining, moving and leaving a voice channel, answered
 * as Discord does with VOICE_STATE_UPDATE and, for a join, VOICE_SERVER_UPDATE naming the voice
 * server and a fresh token (https://discord.com/developers/docs/topics/voice-connections).
 */
import { voiceStateUpdate, type FakeChannelType, type FakeVoiceState } from './fixtures.ts';
import { canJoinVoice } from './permissions.ts';
import { INTENTS, type GatewaySession, type VoiceStateRequest } from './gateway.ts';
import type { DiscordState } from './state.ts';
import type { BotVoiceStateRequest, VoiceCredentials, VoiceServerLink } from './types.ts';

export class BotVoiceStates {
  readonly #state: DiscordState;
  /** What the voice server should expect from each bot, by `${guildId}:${botId}`, while it is in a channel. */
  readonly #credentials = new Map<string, VoiceCredentials>();
  /** The voice server of a guild whose calls were moved (`moveServer`); others use the configured one. */
  readonly #moved = new Map<string, VoiceServerLink>();
  #joins = 0;

  constructor(state: DiscordState) {
    this.#state = state;
  }

  credentials(guildId: string, botId: string): VoiceCredentials | undefined {
    return this.#credentials.get(`${guildId}:${botId}`);
  }

  /** Forgets a bot's call in a guild (it was removed from the guild). */
  forget(guildId: string, botId: string): void {
    this.#credentials.delete(`${guildId}:${botId}`);
  }

  /** The voice server the guild's calls go to now (moved, or the configured one), when there is one to talk to. */
  serverOf(guildId: string): VoiceServerLink | undefined {
    return this.#moved.get(guildId) ?? this.#state.options.voiceServer;
  }

  /**
   * A bot was disconnected from voice by someone (a moderator, the channel deleted): its credentials
   * end and, as Discord does, its voice websocket is closed with 4014 (Disconnected, do not reconnect).
   */
  disconnected(guildId: string, botId: string): void {
    if (!this.#credentials.delete(`${guildId}:${botId}`)) return;
    try {
      this.serverOf(guildId)?.closeConnection?.(guildId, 4014, botId);
    } catch {
      // No voice websocket open (not connected yet, or already closed): nothing to close.
    }
  }

  /**
   * Discord moves a guild's calls to another voice server (a region change, a failing server):
   * each bot in a voice channel there (or those of `botIds`) gets VOICE_SERVER_UPDATE with a fresh
   * token and `to`'s endpoint, and later joins go there too. Resolves how many bots were told.
   * https://discord.com/developers/docs/topics/voice-connections#voice-server-update
   */
  async moveServer(guildId: string, to: VoiceServerLink, botIds?: readonly string[]): Promise<number> {
    this.#moved.set(guildId, to);
    const { voiceToken } = this.#state.options;
    const moving = [...this.#credentials.values()].filter((c) => c.guildId === guildId && (!botIds || botIds.includes(c.userId)));
    for (const c of moving) {
      this.#joins += 1;
      const token = typeof voiceToken === 'string' ? voiceToken : voiceToken(guildId, this.#joins);
      this.#credentials.set(`${guildId}:${c.userId}`, { ...c, token, endpoint: to.endpoint });
      to.announceCall({ guildId, channelId: c.channelId, userId: c.userId, sessionId: c.sessionId });
      await this.#state.gateway.dispatch(
        'VOICE_SERVER_UPDATE',
        { token, guild_id: guildId, endpoint: to.endpoint },
        { botIds: [c.userId] },
      );
    }
    return moving.length;
  }

  /** True when a voice Identify matches the session and token last handed out to its bot in its guild. */
  checkIdentify(identify: { server_id: string; user_id: string; session_id: string; token: string }): boolean {
    const expected = this.#credentials.get(`${identify.server_id}:${identify.user_id}`);
    return (
      !!expected && expected.userId === identify.user_id && expected.sessionId === identify.session_id && expected.token === identify.token
    );
  }

  /** op 4 from the bot's gateway session. */
  onRequest(session: GatewaySession, request: VoiceStateRequest): void {
    const state = this.#state;
    const bot = session.bot.user;
    const wanted: BotVoiceStateRequest = {
      ...(bot.id === state.botUser.id ? {} : { botId: bot.id }),
      guildId: request.guild_id,
      channelId: request.channel_id ?? null,
      selfMute: !!request.self_mute,
      selfDeaf: !!request.self_deaf,
    };
    state.botVoiceStates.push(wanted);
    state.events.emit('botVoiceState');
    const guild = state.guild(wanted.guildId);
    if (!guild || !state.inGuild(bot.id, guild.id)) return;
    if (wanted.channelId) {
      const channel = guild.channels.find((c) => c.id === wanted.channelId);
      if (!channel || (channel.type !== 2 && channel.type !== 13)) return;
      // No View Channel or Connect, or full: Discord sends nothing back, and the join never completes.
      const already = guild.voiceStates.some((v) => v.userId === bot.id && v.channelId === channel.id);
      if (!already && !canJoinVoice(guild, channel, bot.id)) return;
    }
    const botId = bot.id;
    // Discord uses the gateway session id as the voice session id.
    const sessionId = session.id;
    const previous = guild.voiceStates.find((v) => v.userId === botId);
    guild.voiceStates = guild.voiceStates.filter((v) => v.userId !== botId);
    const next = { userId: botId, channelId: wanted.channelId, sessionId, selfMute: wanted.selfMute, selfDeaf: wanted.selfDeaf };
    // Whoever enters a stage joins its audience (suppressed); staying in it keeps their stage state.
    const stage = stageStateOnEntry(guild.channels.find((c) => c.id === wanted.channelId)?.type, previous, wanted.channelId);
    if (wanted.channelId) guild.voiceStates.push({ ...next, channelId: wanted.channelId, ...stage });
    state.emitActivity({ kind: 'voiceStates', guildId: guild.id });
    const member = guild.members.find((m) => m.user.id === botId) ?? { user: bot, roles: [] };
    const update = voiceStateUpdate(guild.id, { ...next, ...stage }, member);
    const dispatches: Promise<void>[] = [state.gateway.dispatch('VOICE_STATE_UPDATE', update, { intent: INTENTS.GuildVoiceStates })];
    const { voiceToken } = state.options;
    const moved = this.#moved.get(guild.id);
    const voiceEndpoint = moved ? () => moved.endpoint : state.options.voiceEndpoint;
    const key = `${guild.id}:${botId}`;
    if (!wanted.channelId) {
      this.#credentials.delete(key);
    } else if (voiceEndpoint) {
      this.#joins += 1;
      const credentials: VoiceCredentials = {
        guildId: guild.id,
        channelId: wanted.channelId,
        userId: botId,
        sessionId,
        token: typeof voiceToken === 'string' ? voiceToken : voiceToken(guild.id, this.#joins),
        endpoint: voiceEndpoint(),
      };
      this.#credentials.set(key, credentials);
      (moved ?? state.options.voiceServer)?.announceCall({ guildId: guild.id, channelId: wanted.channelId, userId: botId, sessionId });
      // Only the bot that asked is told where its call is.
      dispatches.push(
        state.gateway.dispatch(
          'VOICE_SERVER_UPDATE',
          { token: credentials.token, guild_id: guild.id, endpoint: credentials.endpoint },
          { botIds: [botId] },
        ),
      );
    }
    void Promise.all(dispatches).catch(() => {});
  }
}

/** The stage fields of a voice state entering `channelId` (https://discord.com/developers/docs/resources/voice#voice-state-object). */
function stageStateOnEntry(
  type: FakeChannelType | undefined,
  previous: FakeVoiceState | undefined,
  channelId: string | null,
): Pick<FakeVoiceState, 'suppress' | 'requestToSpeakTimestamp'> {
  if (type !== 13) return { suppress: false, requestToSpeakTimestamp: null };
  if (previous?.channelId === channelId)
    return { suppress: previous.suppress ?? true, requestToSpeakTimestamp: previous.requestToSpeakTimestamp ?? null };
  return { suppress: true, requestToSpeakTimestamp: null };
}
