/**
 * What members and moderators do to what was already said, as the local Discord tells the bot:
 * edit a message (MESSAGE_UPDATE), delete one or many (MESSAGE_DELETE, MESSAGE_DELETE_BULK),
 * delete a channel (CHANNEL_DELETE), ban a member (GUILD_BAN_ADD, GUILD_MEMBER_REMOVE), give or
 * take a member's roles (GUILD_MEMBER_UPDATE), disconnect someone from voice (VOICE_STATE_UPDATE),
 * change a channel's permissions (CHANNEL_UPDATE). Payloads
 * follow https://discord.com/developers/docs/events/gateway-events; each goes only to sessions
 * with the intent that carries it.
 */
import { LocalDiscordError } from './errors.ts';
import { findChannel, toAPIChannel, toAPIMember, toAPIUser, voiceStateUpdate, type FakeOverwrite } from './fixtures.ts';
import { INTENTS } from './gateway.ts';
import type { DiscordState } from './state.ts';
import type { BanInput, EditMessageInput } from './types.ts';
import type { BotVoiceStates } from './voice-states.ts';

/** A member's message as sent (sendMessage), or an error naming what is missing. */
function memberMessage(state: DiscordState, channelId: string, messageId: string) {
  const message = state.userMessages.get(messageId);
  if (!message || message.channel_id !== channelId) {
    throw new LocalDiscordError('unknown_message', { message: `no member message ${messageId} in channel ${channelId}` });
  }
  return message;
}

/** Message events of a guild need GUILD_MESSAGES, of a DM DIRECT_MESSAGES. */
const messageIntent = (state: DiscordState, channelId: string) =>
  findChannel(state.guilds, channelId) ? INTENTS.GuildMessages : INTENTS.DirectMessages;

/** A member edits their message. `partial`: the update carries only ids and the edit time, as Discord may send (no content). */
export async function editMessage(state: DiscordState, input: EditMessageInput): Promise<void> {
  const message = memberMessage(state, input.channelId, input.messageId);
  message.content = input.content;
  message.edited_timestamp = new Date(state.now()).toISOString();
  const d = input.partial
    ? { id: message.id, channel_id: message.channel_id, ...state.guildIdOf(message.channel_id), edited_timestamp: message.edited_timestamp }
    : message;
  await state.gateway.dispatch('MESSAGE_UPDATE', d, {
    intent: messageIntent(state, input.channelId),
    evenUnheard: true,
    // Without MESSAGE_CONTENT the content is blanked, as in MESSAGE_CREATE.
    transform: (data, session) =>
      (session.intents & INTENTS.MessageContent && state.messageContent) || input.partial ? data : { ...(data as object), content: '' },
  });
}

/** A member or moderator deletes messages of one channel: one MESSAGE_DELETE, or MESSAGE_DELETE_BULK for several. */
export async function deleteMessages(state: DiscordState, channelId: string, messageIds: readonly string[], bulk: boolean): Promise<void> {
  for (const id of messageIds) memberMessage(state, channelId, id);
  for (const id of messageIds) state.userMessages.delete(id);
  const options = { intent: messageIntent(state, channelId), evenUnheard: true };
  const where = { channel_id: channelId, ...state.guildIdOf(channelId) };
  if (bulk) await state.gateway.dispatch('MESSAGE_DELETE_BULK', { ids: [...messageIds], ...where }, options);
  else for (const id of messageIds) await state.gateway.dispatch('MESSAGE_DELETE', { id, ...where }, options);
}

/**
 * A moderator deletes a guild channel (its messages go with it; Discord sends no MESSAGE_DELETE for
 * them). Whoever was in it, when it is a voice channel, is disconnected (VOICE_STATE_UPDATE with no
 * channel; a bot's voice websocket closed with 4014).
 */
export async function deleteChannel(state: DiscordState, voice: BotVoiceStates, channelId: string): Promise<void> {
  const located = findChannel(state.guilds, channelId);
  if (!located) throw new LocalDiscordError('unknown_channel', { message: `no guild channel ${channelId}` });
  const { guild } = located;
  guild.channels = guild.channels.filter((c) => c.id !== channelId);
  for (const [id, m] of state.userMessages) if (m.channel_id === channelId) state.userMessages.delete(id);
  await state.gateway.dispatch('CHANNEL_DELETE', toAPIChannel(located.channel, guild.id), { intent: INTENTS.Guilds });
  const inside = guild.voiceStates.filter((v) => v.channelId === channelId).map((v) => v.userId);
  for (const userId of inside) await disconnectMember(state, voice, guild.id, userId);
}

/**
 * A moderator disconnects a member (or a bot) from voice (Disconnect, with Move Members):
 * VOICE_STATE_UPDATE with no channel, to everyone who sees voice states; a bot's credentials end and
 * its voice websocket is closed with 4014, as Discord does.
 * https://discord.com/developers/docs/resources/guild#modify-guild-member (channel_id null)
 */
export async function disconnectMember(state: DiscordState, voice: BotVoiceStates, guildId: string, userId: string): Promise<void> {
  const guild = state.guild(guildId);
  if (!guild) throw new LocalDiscordError('unknown_guild', { message: `unknown guild ${guildId}` });
  const previous = guild.voiceStates.find((v) => v.userId === userId);
  if (!previous) return;
  guild.voiceStates = guild.voiceStates.filter((v) => v.userId !== userId);
  state.emitActivity({ kind: 'voiceStates', guildId });
  const member = guild.members.find((m) => m.user.id === userId);
  const update = voiceStateUpdate(guildId, { ...previous, channelId: null, suppress: false, requestToSpeakTimestamp: null }, member);
  await state.gateway.dispatch('VOICE_STATE_UPDATE', update, { intent: INTENTS.GuildVoiceStates });
  voice.disconnected(guildId, userId);
}

/**
 * A moderator edits a channel's permission overwrites (CHANNEL_UPDATE): what members and bots may
 * do there changes from now on; whoever is in a voice channel stays connected, as on Discord.
 */
export async function setChannelOverwrites(state: DiscordState, channelId: string, overwrites: FakeOverwrite[]): Promise<void> {
  const located = findChannel(state.guilds, channelId);
  if (!located) throw new LocalDiscordError('unknown_channel', { message: `no guild channel ${channelId}` });
  located.channel.permissionOverwrites = overwrites.map((o) => ({ ...o }));
  await state.gateway.dispatch('CHANNEL_UPDATE', toAPIChannel(located.channel, located.guild.id), { intent: INTENTS.Guilds });
}

/**
 * A moderator bans a member: GUILD_BAN_ADD (GUILD_MODERATION intent), then GUILD_MEMBER_REMOVE
 * (GUILD_MEMBERS). With `deleteMessages` their messages in the guild are deleted too, and, as
 * Discord does not reliably do, no MESSAGE_DELETE is sent for them.
 */
export async function banMember(state: DiscordState, input: BanInput): Promise<void> {
  const guild = state.guild(input.guildId);
  if (!guild) throw new LocalDiscordError('unknown_guild', { message: `unknown guild ${input.guildId}` });
  const member = guild.members.find((m) => m.user.id === input.userId);
  const user = toAPIUser(member?.user ?? { id: input.userId, username: `user${input.userId.slice(-4)}` });
  guild.members = guild.members.filter((m) => m.user.id !== input.userId);
  if (input.deleteMessages) {
    for (const [id, m] of state.userMessages) {
      if (m.author.id === input.userId && findChannel([guild], m.channel_id)) state.userMessages.delete(id);
    }
  }
  await state.gateway.dispatch('GUILD_BAN_ADD', { guild_id: guild.id, user }, { intent: INTENTS.GuildModeration });
  await state.gateway.dispatch('GUILD_MEMBER_REMOVE', { guild_id: guild.id, user }, { intent: INTENTS.GuildMembers });
}

/** A moderator sets a member's roles: GUILD_MEMBER_UPDATE (GUILD_MEMBERS) with the whole member, as Discord sends it. */
export async function setMemberRoles(state: DiscordState, guildId: string, userId: string, roleIds: readonly string[]): Promise<void> {
  const guild = state.guild(guildId);
  if (!guild) throw new LocalDiscordError('unknown_guild', { message: `unknown guild ${guildId}` });
  const member = guild.members.find((m) => m.user.id === userId);
  if (!member) throw new LocalDiscordError('bad_option', { message: `${userId} is not a member of guild ${guildId}` });
  member.roles = [...roleIds];
  await state.gateway.dispatch(
    'GUILD_MEMBER_UPDATE',
    { ...toAPIMember(member), guild_id: guild.id },
    { intent: INTENTS.GuildMembers, evenUnheard: true },
  );
}
