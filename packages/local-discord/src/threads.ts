/**
 * Threads and forum posts, as Discord tells a bot about them
 * (https://discord.com/developers/docs/topics/threads): a thread is a guild channel of type 11
 * (public) or 12 (private) with a parent_id and thread_metadata, announced by THREAD_CREATE; its
 * members by THREAD_MEMBERS_UPDATE (GUILD_MEMBERS intent). A forum channel (type 15) holds only
 * threads, each started with a first message whose id is the thread's. Threads are kept among the
 * guild's channels, so messages are posted in them as in any text channel.
 */
import { LocalDiscordError } from './errors.ts';
import { findChannel, snowflake, toAPIChannel, type FakeChannel } from './fixtures.ts';
import { INTENTS } from './gateway.ts';
import { sendMessage } from './member-actions.ts';
import type { DiscordState } from './state.ts';
import type { CreateThreadInput, ForumPostInput } from './types.ts';

export async function createThread(state: DiscordState, input: CreateThreadInput): Promise<{ id: string }> {
  const parent = findChannel(state.guilds, input.parentId);
  if (!parent || ![0, 5].includes(parent.channel.type)) {
    throw new LocalDiscordError('unknown_channel', { message: `no text channel ${input.parentId} to start a thread in` });
  }
  return startThread(state, parent.guild.id, input.parentId, input.name, input.type ?? 11, [
    input.owner.id,
    ...(input.memberIds ?? []).filter((id) => id !== input.owner.id),
  ]);
}

export async function createForumPost(state: DiscordState, input: ForumPostInput): Promise<{ id: string }> {
  const forum = findChannel(state.guilds, input.forumId);
  if (forum?.channel.type !== 15) throw new LocalDiscordError('unknown_channel', { message: `no forum channel ${input.forumId}` });
  const { id } = await startThread(state, forum.guild.id, input.forumId, input.name, 11, [input.author.id]);
  await sendMessage(state, {
    id,
    channelId: id,
    author: input.author,
    content: input.content,
    ...(input.attachments ? { attachments: input.attachments } : {}),
  });
  return { id };
}

async function startThread(
  state: DiscordState,
  guildId: string,
  parentId: string,
  name: string,
  type: 11 | 12,
  memberIds: string[],
): Promise<{ id: string }> {
  const guild = state.guild(guildId)!;
  const createdAt = new Date(state.now()).toISOString();
  const thread: FakeChannel = {
    id: snowflake(state.now()),
    name,
    type,
    parentId,
    thread: { ownerId: memberIds[0]!, memberIds, archived: false, locked: false, createdAt },
  };
  guild.channels.push(thread);
  await state.gateway.dispatch('THREAD_CREATE', { ...toAPIChannel(thread, guildId), newly_created: true }, { intent: INTENTS.Guilds });
  await state.gateway.dispatch(
    'THREAD_MEMBERS_UPDATE',
    {
      id: thread.id,
      guild_id: guildId,
      member_count: memberIds.length,
      added_members: memberIds.map((userId) => ({ id: thread.id, user_id: userId, join_timestamp: createdAt, flags: 0 })),
    },
    { intent: INTENTS.GuildMembers },
  );
  return { id: thread.id };
}
