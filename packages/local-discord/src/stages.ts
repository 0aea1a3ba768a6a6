/**
 * Stage speakers and voice channel statuses, with Discord's permission checks:
 * - PATCH /guilds/{guild}/voice-states/@me and /voice-states/{user}: becoming a speaker (suppress
 *   false) needs Mute Members in the stage, asking to speak (request_to_speak_timestamp) needs
 *   Request to Speak; anyone may step down or withdraw their request; `channel_id` must be the
 *   stage the user is in (https://discord.com/developers/docs/resources/voice#modify-current-user-voice-state).
 * - PUT /channels/{channel}/voice-status: Set Voice Channel Status in that voice channel, and
 *   Manage Channels as well when not connected to it (discord-api-docs PR 6400, "Set Voice Channel
 *   Status"); dispatches VOICE_CHANNEL_STATUS_UPDATE. At most 500 characters; "" clears it.
 */
import { API_ERRORS, invalidFormBody, LocalDiscordError } from './errors.ts';
import { findChannel, PERMISSIONS, voiceStateUpdate, type FakeGuild, type FakeVoiceState } from './fixtures.ts';
import { INTENTS } from './gateway.ts';
import { channelPermissions } from './permissions.ts';
import { NO_CONTENT, type RouteResult, type Router } from './rest/router.ts';
import type { DiscordState } from './state.ts';

const MAX_STATUS = 500;

export function stageRoutes(router: Router, state: DiscordState): void {
  router.on('PATCH', '/guilds/:guild/voice-states/:user', ({ params, json, bot }) => {
    const guild = state.guild(params.guild);
    if (!guild || !state.inGuild(bot.user.id, guild.id)) return API_ERRORS.unknownGuild;
    const self = params.user === '@me' || params.user === bot.user.id;
    const userId = self ? bot.user.id : (params.user as string);
    const body = (json ?? {}) as { channel_id?: unknown; suppress?: unknown; request_to_speak_timestamp?: unknown };
    return modifyVoiceState(state, guild, { actor: bot.user.id, userId, self }, body);
  });
  router.on('PUT', '/channels/:channel/voice-status', ({ params, json, bot }) => {
    const found = findChannel(state.guilds, params.channel as string);
    if (!found) return API_ERRORS.unknownChannel;
    const { guild, channel } = found;
    if (channel.type !== 2) return API_ERRORS.nonTextChannel;
    const status = (json as { status?: unknown } | undefined)?.status ?? null;
    if (status !== null && typeof status !== 'string') return invalidFormBody('status', 'BASE_TYPE_BAD_TYPE', 'Must be a string.');
    if (typeof status === 'string' && status.length > MAX_STATUS) {
      return invalidFormBody('status', 'BASE_TYPE_MAX_LENGTH', `Must be ${MAX_STATUS} or fewer in length.`);
    }
    const botId = bot.user.id;
    const bits = channelPermissions(guild, channel, botId);
    const connected = guild.voiceStates.some((v) => v.userId === botId && v.channelId === channel.id);
    const needed = PERMISSIONS.ViewChannel | PERMISSIONS.SetVoiceChannelStatus | (connected ? 0n : PERMISSIONS.ManageChannels);
    if ((bits & needed) !== needed) return API_ERRORS.missingPermissions;
    channel.status = status === '' ? null : status;
    state.emitActivity({ kind: 'voiceStates', guildId: guild.id });
    void state.gateway
      .dispatch('VOICE_CHANNEL_STATUS_UPDATE', { id: channel.id, guild_id: guild.id, status: channel.status })
      .catch(() => {});
    return NO_CONTENT;
  });
}

function modifyVoiceState(
  state: DiscordState,
  guild: FakeGuild,
  who: { actor: string; userId: string; self: boolean },
  body: { channel_id?: unknown; suppress?: unknown; request_to_speak_timestamp?: unknown },
): RouteResult {
  const { userId, self } = who;
  const voice = guild.voiceStates.find((v) => v.userId === userId);
  if (!voice) return API_ERRORS.unknownVoiceState;
  if (typeof body.channel_id !== 'string' || body.channel_id !== voice.channelId) {
    return invalidFormBody('channel_id', 'CHANNEL_ID_INVALID', 'The user is not in this channel.');
  }
  const channel = guild.channels.find((c) => c.id === voice.channelId);
  if (channel?.type !== 13) return invalidFormBody('channel_id', 'CHANNEL_TYPE_INVALID', 'Not a stage channel.');
  const bits = channelPermissions(guild, channel, who.actor);
  const canMute = (bits & PERMISSIONS.MuteMembers) !== 0n;
  if (body.suppress === false && !canMute) return API_ERRORS.missingPermissions;
  if (body.suppress === true && !self && !canMute) return API_ERRORS.missingPermissions;
  const asks = typeof body.request_to_speak_timestamp === 'string';
  if (asks && (!self || (bits & PERMISSIONS.RequestToSpeak) === 0n)) return API_ERRORS.missingPermissions;
  if (typeof body.suppress === 'boolean') voice.suppress = body.suppress;
  if (asks) voice.requestToSpeakTimestamp = body.request_to_speak_timestamp as string;
  else if (body.request_to_speak_timestamp === null) voice.requestToSpeakTimestamp = null;
  // Invited to speak by someone else: a member's request is stamped now, a bot's is not (Discord's rule).
  const isBot = guild.members.find((m) => m.user.id === userId)?.user.bot ?? false;
  if (body.suppress === false && !self && !isBot) voice.requestToSpeakTimestamp = new Date(state.now()).toISOString();
  announce(state, guild, voice);
  return NO_CONTENT;
}

function announce(state: DiscordState, guild: FakeGuild, voice: FakeVoiceState): void {
  state.emitActivity({ kind: 'voiceStates', guildId: guild.id });
  const member = guild.members.find((m) => m.user.id === voice.userId);
  void state.gateway
    .dispatch('VOICE_STATE_UPDATE', voiceStateUpdate(guild.id, voice, member), { intent: INTENTS.GuildVoiceStates })
    .catch(() => {});
}

/** A stage moderator invites `userId` to speak (`speaker` true) or moves them back to the audience. */
export function setStageSpeaker(state: DiscordState, guildId: string, userId: string, speaker: boolean): void {
  const guild = state.guild(guildId);
  if (!guild) throw new LocalDiscordError('unknown_guild', { message: `unknown guild ${guildId}` });
  const voice = guild.voiceStates.find((v) => v.userId === userId);
  if (!voice) throw new LocalDiscordError('unknown_channel', { message: `${userId} is in no voice channel of ${guildId}` });
  voice.suppress = !speaker;
  if (!speaker) voice.requestToSpeakTimestamp = null;
  announce(state, guild, voice);
}
