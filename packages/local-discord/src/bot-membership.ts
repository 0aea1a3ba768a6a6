/**
 * Bots joining and leaving guilds, as Discord does it: a bot added through its authorize URL
 * (https://discord.com/developers/docs/topics/oauth2#bot-authorization-flow) becomes a member with a
 * managed role of the permissions asked for; its sessions get GUILD_CREATE and the other bots'
 * GUILD_MEMBER_ADD. A bot removed from a guild leaves its voice channel, its sessions get
 * GUILD_DELETE (no `unavailable`: it was removed) and the other bots' GUILD_MEMBER_REMOVE.
 */
import { LocalDiscordError } from './errors.ts';
import { toAPIMember, toAPIUser } from './fixtures.ts';
import { guildCreatePayload, INTENTS } from './gateway-payloads.ts';
import type { DiscordState } from './state.ts';
import type { FakeBot } from './types.ts';
import type { BotVoiceStates } from './voice-states.ts';

export async function addBotToGuild(state: DiscordState, applicationId: string, guildId: string, permissions?: bigint): Promise<void> {
  const { bot, guild } = lookup(state, applicationId, guildId);
  if (!state.joinGuild(bot, guild, permissions)) return;
  const member = guild.members.find((m) => m.user.id === bot.user.id);
  const writes: Promise<void>[] = [];
  for (const session of state.gateway.sessions.values()) {
    if (session.bot !== bot || !state.gateway.owns(session, guild.id) || !(session.intents & INTENTS.Guilds)) continue;
    writes.push(state.gateway.dispatchToSession(session, 'GUILD_CREATE', guildCreatePayload(guild, session.intents, bot.user.id)));
  }
  const others = state.botsIn(guild.id).filter((id) => id !== bot.user.id);
  if (member && others.length > 0) {
    writes.push(
      state.gateway.dispatch(
        'GUILD_MEMBER_ADD',
        { ...toAPIMember(member), guild_id: guild.id },
        { intent: INTENTS.GuildMembers, botIds: others, evenUnheard: true },
      ),
    );
  }
  state.emitActivity({ kind: 'voiceStates', guildId: guild.id });
  await Promise.all(writes);
}

export async function removeBotFromGuild(
  state: DiscordState,
  voice: BotVoiceStates,
  applicationId: string,
  guildId: string,
): Promise<void> {
  const { bot, guild } = lookup(state, applicationId, guildId);
  const wasInVoice = guild.voiceStates.some((v) => v.userId === bot.user.id);
  if (!state.leaveGuild(bot, guild)) return;
  voice.forget(guild.id, bot.user.id);
  const others = state.botsIn(guild.id);
  const writes: Promise<void>[] = [
    state.gateway.dispatch('GUILD_DELETE', { id: guild.id }, { guildId: guild.id, botIds: [bot.user.id], evenUnheard: true }),
  ];
  if (others.length > 0) {
    if (wasInVoice) {
      const left = { guild_id: guild.id, channel_id: null, user_id: bot.user.id, session_id: '', deaf: false, mute: false };
      writes.push(
        state.gateway.dispatch(
          'VOICE_STATE_UPDATE',
          { ...left, self_deaf: false, self_mute: false, self_video: false, suppress: false, request_to_speak_timestamp: null },
          { intent: INTENTS.GuildVoiceStates, botIds: others, evenUnheard: true },
        ),
      );
    }
    writes.push(
      state.gateway.dispatch(
        'GUILD_MEMBER_REMOVE',
        { guild_id: guild.id, user: toAPIUser(bot.user) },
        { intent: INTENTS.GuildMembers, botIds: others, evenUnheard: true },
      ),
    );
  }
  state.emitActivity({ kind: 'voiceStates', guildId: guild.id });
  await Promise.all(writes);
}

function lookup(
  state: DiscordState,
  applicationId: string,
  guildId: string,
): { bot: FakeBot; guild: NonNullable<ReturnType<DiscordState['guild']>> } {
  const bot = state.botByApplication(applicationId);
  if (!bot) throw new LocalDiscordError('unknown_application', { message: `no bot application ${applicationId}` });
  const guild = state.guild(guildId);
  if (!guild) throw new LocalDiscordError('unknown_guild', { message: `no guild ${guildId}` });
  return { bot, guild };
}
