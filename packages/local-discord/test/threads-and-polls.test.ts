import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChannelType, type Client, type Message, type ThreadChannel } from 'discord.js';
import { DEFAULT_IDS, defaultGuild, startFakeDiscord, type FakeDiscord } from '../src/server.ts';
import { loginClient } from './helpers.ts';

// Threads, forum posts and polls reach discord.js as Discord sends them: THREAD_CREATE with a
// parent and thread metadata, the thread's members, a forum post's first message with the post's
// id, a message's poll; a message posted in a thread is kept there.
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob' };
const FORUM = '1100000000000000160';

let fake: FakeDiscord;
let client: Client<true>;
beforeAll(async () => {
  const guild = defaultGuild();
  guild.channels.push({ id: FORUM, name: 'questions', type: 15, position: 3 });
  fake = await startFakeDiscord({ guilds: [guild] });
  client = await loginClient(fake);
});
afterAll(async () => {
  await client?.destroy();
  await fake?.close();
});

describe('local Discord: threads, forums and polls', () => {
  it('a private thread arrives as THREAD_CREATE under its parent, with its members; the bot can post in it', async () => {
    const created = once(client, 'threadCreate') as Promise<[ThreadChannel, boolean]>;
    const members = once(client, 'threadMembersUpdate');
    const { id } = await fake.createThread({ parentId: DEFAULT_IDS.general, name: 'secret', owner: alice, type: 12, memberIds: [bob.id] });
    const [thread, isNew] = await created;
    await members;
    expect([thread.id, thread.type, thread.parentId, thread.ownerId, isNew]).toEqual([
      id,
      ChannelType.PrivateThread,
      DEFAULT_IDS.general,
      alice.id,
      true,
    ]);
    expect([...thread.members.cache.keys()].sort()).toEqual([alice.id, bob.id].sort());
    await thread.send('in the thread');
    expect(fake.messages.at(-1)?.channelId).toBe(id);
  });

  it("a forum post is a thread of the forum whose first message has the post's id", async () => {
    const message = once(client, 'messageCreate') as Promise<[Message]>;
    const { id } = await fake.createForumPost({ forumId: FORUM, name: 'How do I build?', author: alice, content: 'Steps, please' });
    const [first] = await message;
    expect([first.id, first.channelId, first.content]).toEqual([id, id, 'Steps, please']);
    expect(first.channel.isThread() && [first.channel.name, first.channel.parent?.type]).toEqual([
      'How do I build?',
      ChannelType.GuildForum,
    ]);
  });

  it('a poll arrives on its message with its question and answers', async () => {
    const message = once(client, 'messageCreate') as Promise<[Message]>;
    await fake.sendMessage({
      channelId: DEFAULT_IDS.general,
      author: alice,
      content: '',
      poll: { question: 'Lunch?', answers: ['Ramen', 'Curry'] },
    });
    const [{ poll }] = await message;
    expect([poll?.question.text, poll?.answers.map((a) => a.text)]).toEqual(['Lunch?', ['Ramen', 'Curry']]);
  });
});
