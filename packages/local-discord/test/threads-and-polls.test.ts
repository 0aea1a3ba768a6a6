import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChannelType, MessageType, type Client, type Message, type ThreadChannel } from 'discord.js';
import { LocalDiscordError } from '../src/errors.ts';
import { DEFAULT_IDS, defaultGuild, startFakeDiscord, type FakeDiscord } from '../src/server.ts';
import { loginClient } from './helpers.ts';

// Threads, forum posts and polls reach discord.js as Discord sends them: THREAD_CREATE with a
// parent and thread metadata, the thread's members, a forum post's first message with the post's
// id, a message's poll and its end (the final counts, then the poll result message), attachments
// with their alt text; a message posted in a thread is kept there.
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

  it("an attachment carries the alt text its member wrote (Discord's `description`); longer than Discord's 1,024 characters is refused", async () => {
    const message = once(client, 'messageCreate') as Promise<[Message]>;
    await fake.sendMessage({
      channelId: DEFAULT_IDS.general,
      author: alice,
      content: '',
      attachments: [
        { filename: 'IMG_1.jpg', content_type: 'image/jpeg', description: '夕焼けの海' },
        { filename: 'IMG_2.jpg', content_type: 'image/jpeg' },
      ],
    });
    const [{ attachments }] = await message;
    expect([...attachments.values()].map((a) => [a.name, a.description])).toEqual([
      ['IMG_1.jpg', '夕焼けの海'],
      ['IMG_2.jpg', null],
    ]);
    const tooLong = fake.sendMessage({
      channelId: DEFAULT_IDS.general,
      author: alice,
      content: '',
      attachments: [{ filename: 'a.png', description: 'あ'.repeat(1025) }],
    });
    await expect(tooLong).rejects.toSatisfy((e) => e instanceof LocalDiscordError && e.code === 'bad_option');
  });

  it('a poll ends: its message gets the final counts, then the poll result message names the question, the winner and the votes', async () => {
    const created = once(client, 'messageCreate') as Promise<[Message]>;
    const { id } = await fake.sendMessage({
      channelId: DEFAULT_IDS.general,
      author: bob,
      content: '',
      poll: { question: 'Lunch?', answers: ['Ramen', 'Curry', 'Soba'] },
    });
    await created;
    const updated = once(client, 'messageUpdate') as Promise<[Message, Message]>;
    const posted = once(client, 'messageCreate') as Promise<[Message]>;
    const { id: resultId } = await fake.endPoll({ channelId: DEFAULT_IDS.general, messageId: id, votes: [1, 3] });
    const [, poll] = await updated;
    expect([poll.id, poll.poll?.resultsFinalized, poll.poll?.answers.map((a) => a.voteCount)]).toEqual([id, true, [1, 3, 0]]);
    const [result] = await posted;
    expect([result.id, result.type, result.author.id, result.reference?.messageId, result.system]).toEqual([
      resultId,
      MessageType.PollResult,
      bob.id,
      id,
      true,
    ]);
    expect(result.embeds[0]?.data.type).toBe('poll_result');
    expect(Object.fromEntries(result.embeds[0]!.fields.map((f) => [f.name, f.value]))).toEqual({
      poll_question_text: 'Lunch?',
      victor_answer_votes: '3',
      total_votes: '4',
      victor_answer_id: '2',
      victor_answer_text: 'Curry',
    });
    // Ended once: a second end is refused.
    await expect(fake.endPoll({ channelId: DEFAULT_IDS.general, messageId: id })).rejects.toSatisfy(
      (e) => e instanceof LocalDiscordError && e.code === 'unknown_message',
    );
  });

  /** The next poll result message the client gets (the poll's own MESSAGE_CREATE may still be on its way). */
  const nextResult = () =>
    new Promise<Message>((done) => {
      const on = (m: Message) => {
        if (m.type !== MessageType.PollResult) return;
        client.off('messageCreate', on);
        done(m);
      };
      client.on('messageCreate', on);
    });

  it('a tie and a poll nobody voted in end without a winner', async () => {
    const fields = async (votes: number[]) => {
      const { id } = await fake.sendMessage({
        channelId: DEFAULT_IDS.general,
        author: alice,
        content: '',
        poll: { question: 'Q', answers: ['A', 'B'] },
      });
      const posted = nextResult();
      await fake.endPoll({ channelId: DEFAULT_IDS.general, messageId: id, votes });
      return Object.fromEntries((await posted).embeds[0]!.fields.map((f) => [f.name, f.value]));
    };
    expect(await fields([2, 2])).toEqual({ poll_question_text: 'Q', victor_answer_votes: '2', total_votes: '4' });
    expect(await fields([])).toEqual({ poll_question_text: 'Q', victor_answer_votes: '0', total_votes: '0' });
  });

  it("without message content the result's embed is blanked, as a member's embeds are", async () => {
    const { id } = await fake.sendMessage({
      channelId: DEFAULT_IDS.general,
      author: alice,
      content: '',
      poll: { question: 'Q', answers: ['A'] },
    });
    fake.setMessageContent(false);
    try {
      const posted = nextResult();
      await fake.endPoll({ channelId: DEFAULT_IDS.general, messageId: id, votes: [1] });
      expect((await posted).embeds).toEqual([]);
    } finally {
      fake.setMessageContent(true);
    }
  });
});
