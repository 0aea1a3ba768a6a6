import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { APIApplicationCommandInteractionDataOption } from 'discord.js';
import {
  DEFAULT_IDS,
  defaultGuild,
  PERMISSIONS,
  startFakeVoiceServer,
  trustCertificate,
  type FakeVoiceServer,
} from '@yomiage/local-discord';
import { SHORT_TONES, standardRequests, startHarness, type Harness } from '../support/bot-harness.ts';

// Threads, forum posts, polls and embeds as members write them, end to end (loopback Discord with
// threads and forums, TLS voice server with DAVE, emulator). First without voice: a thread of an
// MP3 channel gets its file in the thread. Then in a call (alice in it, the bot bound to #general):
// threads of read channels, forum posts (title and first message), private threads only when
// everyone in the call is in them, /reading threads off, polls and their results when they end
// (not from a channel someone in the call cannot view), attachments by their alt text, and
// attachments and embeds by kind.
const alice = { id: DEFAULT_IDS.alice, username: 'alice', globalName: 'Alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob', globalName: 'Bob' }; // Moderator: Manage Server
const guildId = DEFAULT_IDS.guild;
const FORUM = '1100000000000000160';
/** An auto-read channel only moderators (bob) can view: alice, in the call, cannot. */
const STAFF = '1100000000000000161';

let voice: FakeVoiceServer;
let h: Harness;

beforeAll(async () => {
  voice = await startFakeVoiceServer();
  trustCertificate(voice.caCertPem);
  const guild = defaultGuild();
  guild.channels.push({ id: FORUM, name: 'questions', type: 15, position: 3 });
  guild.channels.push({
    id: STAFF,
    name: 'staff',
    type: 0,
    position: 4,
    permissionOverwrites: [
      { id: DEFAULT_IDS.everyoneRole, type: 0, allow: '0', deny: String(PERMISSIONS.ViewChannel) },
      { id: DEFAULT_IDS.moderatorRole, type: 0, allow: String(PERMISSIONS.ViewChannel), deny: '0' },
    ],
  });
  // A wide rate window: under the default one the scheduler would hold each marker line for company.
  const rate = { standard: { limit: 1000, windowMs: 60_000 }, advanced: { limit: 1000, windowMs: 60_000 } };
  h = await startHarness({
    discord: { guilds: [guild], voiceEndpoint: () => voice.endpoint },
    env: { AUTO_READ_MAX_AGE_SECONDS: '600' },
    emulator: { ...SHORT_TONES, rate },
    bot: { rateLimits: rate },
  });
  const mp3 = [{ name: 'add', type: 1, options: [{ name: 'mp3', type: 5, value: true }] }] as APIApplicationCommandInteractionDataOption[];
  expect(await command(bob, 'autoread', mp3, DEFAULT_IDS.chat)).toContain('costs characters');
  expect(await command(bob, 'autoread', sub('add'), FORUM)).not.toBe('');
  expect(await command(bob, 'autoread', sub('add'), STAFF)).not.toBe('');
}, 60_000);
afterAll(async () => {
  await h?.close();
  await voice?.close();
});

async function command(
  user: { id: string; username: string },
  name: string,
  options: APIApplicationCommandInteractionDataOption[],
  channelId: string = DEFAULT_IDS.general,
): Promise<string> {
  const interaction = await h.discord.sendInteraction({ channelId, user, name, locale: 'en-US', options });
  const kind = name === 'join' ? 'editOriginal' : 'callback';
  return String((await interaction.waitForResponse((r) => r.kind === kind, 30_000)).data?.content ?? '');
}
const sub = (name: string, options: APIApplicationCommandInteractionDataOption[] = []) => [
  { name, type: 1, options } as APIApplicationCommandInteractionDataOption,
];

let marker = 0;
/** Runs `send`, then a marker line in #general; resolves with the texts asked of the service since `send`, up to the marker's. */
async function spokenAround(send: () => Promise<unknown>): Promise<string> {
  const before = standardRequests(h.emulator).length;
  await send();
  const mark = `目印${++marker}番です`;
  await h.discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content: mark });
  return vi.waitUntil(
    () => {
      const texts = standardRequests(h.emulator)
        .slice(before)
        .map((r) => r.text);
      return texts.some((t) => t.includes(mark)) ? texts.join('|') : undefined;
    },
    { timeout: 20_000, interval: 20, message: `the marker ${mark}` },
  );
}

describe('threads of an MP3 channel, without voice', () => {
  it("a thread's message is read and its MP3 is posted in the thread", async () => {
    const { id: thread } = await h.discord.createThread({ parentId: DEFAULT_IDS.chat, name: '雑談スレ', owner: alice });
    const posted = h.discord.waitForMessage((m) => m.channelId === thread && m.attachments.length > 0, 20_000);
    await h.discord.sendMessage({ channelId: thread, author: alice, content: 'スレッドの中の話です' });
    expect((await posted).attachments[0]!.filename).toMatch(/\.mp3$/);
    expect(standardRequests(h.emulator).some((r) => r.text.includes('スレッドの中の話です'))).toBe(true);
  });
});

describe('in a call', () => {
  beforeAll(async () => {
    await h.discord.setVoiceState(alice.id, guildId, DEFAULT_IDS.voice);
    voice.simulateListener({ guildId, channelId: DEFAULT_IDS.voice, userId: alice.id });
    // Speed 4: clips a quarter as long, as voice plays in real time and each marker waits behind them.
    await command(bob, 'config', [{ name: 'speed', type: 1, options: [{ name: 'value', type: 10, value: 4 }] }]);
    expect(await command(alice, 'join', [])).toContain('Joined');
    await voice.waitForDave(guildId);
  }, 60_000);

  it('a thread of the bound channel is read', async () => {
    const { id: thread } = await h.discord.createThread({ parentId: DEFAULT_IDS.general, name: '相談', owner: bob });
    const spoken = await spokenAround(() => h.discord.sendMessage({ channelId: thread, author: bob, content: 'スレッドで相談します' }));
    expect(spoken).toContain('スレッドで相談します');
  });

  it('a forum post in an auto-read forum is read: its title, then its first message', async () => {
    const spoken = await spokenAround(() =>
      h.discord.createForumPost({ forumId: FORUM, name: 'ビルドが通らない', author: bob, content: '手順を教えてください' }),
    );
    expect(spoken).toMatch(/ビルドが通らない.*手順を教えてください/);
  });

  it('a private thread is read only when everyone in the call is in it', async () => {
    const { id: closed } = await h.discord.createThread({ parentId: DEFAULT_IDS.general, name: '内緒', owner: bob, type: 12 });
    const { id: open } = await h.discord.createThread({
      parentId: DEFAULT_IDS.general,
      name: '二人',
      owner: bob,
      type: 12,
      memberIds: [alice.id],
    });
    const spoken = await spokenAround(async () => {
      await h.discord.sendMessage({ channelId: closed, author: bob, content: '聞かれたくない話' });
      await h.discord.sendMessage({ channelId: open, author: bob, content: '二人だけの話' });
    });
    expect(spoken).toContain('二人だけの話');
    expect(spoken).not.toContain('聞かれたくない');
  });

  it('/reading threads off: threads and forum posts are not read; on again: they are', async () => {
    expect(await command(bob, 'reading', sub('threads', [{ name: 'value', type: 5, value: false }]))).toContain('threads');
    const { id: thread } = await h.discord.createThread({ parentId: DEFAULT_IDS.general, name: '設定', owner: bob });
    const off = await spokenAround(async () => {
      await h.discord.sendMessage({ channelId: thread, author: bob, content: 'オフの間のスレッド' });
      await h.discord.createForumPost({ forumId: FORUM, name: 'オフの間の投稿', author: bob, content: '本文' });
    });
    expect(off).not.toContain('オフの間');
    expect(await command(bob, 'reading', sub('show'))).toContain('threads and forum posts: off');
    await command(bob, 'reading', sub('threads', [{ name: 'value', type: 5, value: true }]));
    expect(await spokenAround(() => h.discord.sendMessage({ channelId: thread, author: bob, content: 'オンに戻した' }))).toContain(
      'オンに戻した',
    );
  });

  it('a poll is read as its question and options', async () => {
    const spoken = await spokenAround(() =>
      h.discord.sendMessage({
        channelId: DEFAULT_IDS.general,
        author: bob,
        content: '',
        poll: { question: '昼ごはんは何にする', answers: ['ラーメン', 'カレー'] },
      }),
    );
    expect(spoken).toContain('投票、昼ごはんは何にする、選択肢、ラーメン、カレー');
  });

  it('an image is read by its alt text, the images without one by kind', async () => {
    const spoken = await spokenAround(() =>
      h.discord.sendMessage({
        channelId: DEFAULT_IDS.general,
        author: bob,
        content: '今日の写真',
        attachments: [
          { filename: 'IMG_1.jpg', content_type: 'image/jpeg', description: '夕焼けの海' },
          { filename: 'IMG_2.jpg', content_type: 'image/jpeg' },
          { filename: 'IMG_3.jpg', content_type: 'image/jpeg', description: '' },
        ],
      }),
    );
    expect(spoken).toContain('今日の写真、画像: 夕焼けの海、画像2枚');
  });

  it("a poll's end is read as its question, its winner and the votes, without a name; a tie as a tie", async () => {
    const poll = (question: string) =>
      h.discord.sendMessage({
        channelId: DEFAULT_IDS.general,
        author: bob,
        content: '',
        poll: { question, answers: ['ラーメン', 'カレー'] },
      });
    const { id: dinner } = await poll('夕飯はどこにする');
    const { id: lunch } = await poll('お昼はどこにする');
    const spoken = await spokenAround(async () => {
      // Someone else spoke last: were the result read as Bob's message, his name would come first.
      await h.discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content: '結果を待ちます' });
      await h.discord.endPoll({ channelId: DEFAULT_IDS.general, messageId: dinner, votes: [1, 3] });
      await h.discord.endPoll({ channelId: DEFAULT_IDS.general, messageId: lunch, votes: [2, 2] });
    });
    expect(spoken).toContain('投票結果、夕飯はどこにする、1位はカレー、全4票中3票');
    expect(spoken).toContain('投票結果、お昼はどこにする、2票ずつの同票、全4票');
    expect(spoken).not.toContain('Bob、投票結果');
  });

  it("a poll's end in a channel someone in the call cannot view is not read there, and its author is told", async () => {
    const { id } = await h.discord.sendMessage({
      channelId: STAFF,
      author: bob,
      content: '',
      poll: { question: '内緒の打ち上げ会場', answers: ['居酒屋', '焼肉'] },
    });
    let result = '';
    const spoken = await spokenAround(
      async () => ({ id: result } = await h.discord.endPoll({ channelId: STAFF, messageId: id, votes: [0, 2] })),
    );
    expect(spoken).not.toMatch(/内緒|焼肉/);
    // Told as for a message of theirs: a reply saying why, or a reaction when told so shortly before.
    const told = () =>
      h.discord.reactions.some((r) => r.messageId === result && r.emoji === '🔇') ||
      h.discord.messages.some((m) => m.messageReference?.message_id === result && m.content.includes('読み上げていません'));
    await vi.waitUntil(told, { timeout: 10_000, interval: 20 });
  });

  it('attachments and embeds are read by kind with their count; a link preview is not', async () => {
    // Embeds-only messages come from webhooks and bots (a member's embeds are link previews).
    await command(bob, 'reading', sub('bots', [{ name: 'value', type: 3, value: 'all' }]));
    const spoken = await spokenAround(async () => {
      await h.discord.sendMessage({
        channelId: DEFAULT_IDS.general,
        author: bob,
        content: '写真です',
        attachments: [
          { filename: 'IMG_1.jpg', content_type: 'image/jpeg' },
          { filename: 'IMG_2.png', content_type: 'image/png' },
          { filename: 'clip.mp4', content_type: 'video/mp4' },
        ],
      });
      await h.discord.sendMessage({
        channelId: DEFAULT_IDS.general,
        author: bob,
        content: 'これ見て https://example.com/news',
        embeds: [{ type: 'article', url: 'https://example.com/news', title: 'プレビューの見出し' }],
      });
      // Discord gives a preview's URL percent-encoded (or redirected): still a preview, not read.
      await h.discord.sendMessage({
        channelId: DEFAULT_IDS.general,
        author: bob,
        content: '東京の記事 https://ja.wikipedia.org/wiki/東京',
        embeds: [{ type: 'article', url: 'https://ja.wikipedia.org/wiki/%E6%9D%B1%E4%BA%AC', title: '東京都' }],
      });
      await h.discord.sendMessage({
        channelId: DEFAULT_IDS.general,
        author: bob,
        content: '',
        webhookId: '1100000000000000777',
        embeds: [{ type: 'image', url: 'https://cdn.example.com/cat.gif', thumbnail: { url: 'https://cdn.example.com/cat.gif' } }],
      });
    });
    expect(spoken).toContain('写真です、画像2枚、動画');
    expect(spoken).toContain('これ見て URL省略');
    expect(spoken).not.toContain('プレビューの見出し');
    expect(spoken).not.toContain('埋め込み');
    // The embeds-only message: its image, once (merged after the previous line, or alone).
    expect(spoken).toMatch(/URL省略[。、|]+(Bob、)?画像[。|]/);
  });
});
