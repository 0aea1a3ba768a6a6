/**
 * Files and polls from the playground page, as a Discord client sends them: a file reaches the bot
 * with the alt text its member wrote, and the page serves it back (sandboxed); a poll reaches the
 * bot, members vote by Discord's rules (one answer unless several are allowed, a click again takes
 * the vote back), only its author ends it early, and its end posts Discord's poll result message
 * with the winner and the votes. Discord's limits are refused with a word naming them, before
 * anything reaches the bot. The bot's side is a discord.js client logged into the local Discord.
 */
import { EventEmitter } from 'node:events';
import { request } from 'node:http';
import { MessageType, type Client, type Message } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { startFakeDiscord, startFakeVoiceServer, type FakeDiscord, type FakeVoiceServer } from '@yomiage/local-discord';
import { loginClient } from '@yomiage/local-discord/test/helpers';
import type { BotLogLine, BotProcessEvents } from '../src/bot-process.ts';
import { PageServer } from '../src/page-server.ts';
import { sampleImagePng } from '../src/sample-image.ts';
import { VoiceTap } from '../src/voice-tap.ts';
import { playgroundGuild, PLAYGROUND_IDS as IDS } from '../src/world.ts';

let discord: FakeDiscord;
let voice: FakeVoiceServer;
let emulator: Emulator;
let tap: VoiceTap;
let page: PageServer;
let client: Client<true>;
/** Every message the bot was told of (created), in order. */
const created: Message[] = [];
const updated: Message[] = [];

const bot = Object.assign(new EventEmitter<BotProcessEvents>(), { status: 'ready' as const, logs: [] as BotLogLine[] });

beforeAll(async () => {
  voice = await startFakeVoiceServer();
  discord = await startFakeDiscord({ guilds: [playgroundGuild()], voiceEndpoint: () => voice.endpoint });
  emulator = await startEmulator();
  tap = new VoiceTap(voice, { guildId: IDS.guild });
  page = new PageServer({ port: 0, guildId: IDS.guild, discord, voice, emulator, bot, tap });
  await page.listen();
  client = await loginClient(discord);
  client.on('messageCreate', (m) => void created.push(m));
  client.on('messageUpdate', (_old, m) => void updated.push(m as Message));
});
afterAll(async () => {
  await client?.destroy();
  await page?.close();
  tap?.close();
  await Promise.all([discord?.close(), voice?.close(), emulator?.close()]);
});

/** A POST from the page (its Host and Origin): status and the JSON answer. */
function post(path: string, body: unknown): Promise<{ status: number; body: any }> {
  const url = new URL(path, page.url);
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        method: 'POST',
        hostname: url.hostname,
        port: url.port,
        path: url.pathname,
        headers: { host: url.host, origin: url.origin, 'content-type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') }));
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

async function get(path: string): Promise<{ status: number; headers: Headers; body: Buffer }> {
  const res = await fetch(new URL(path, page.url));
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

async function timeline(): Promise<Array<Record<string, any>>> {
  return JSON.parse((await get('/api/state')).body.toString('utf8')).timeline;
}

/** The next message the bot is told of after `from` (an index into `created`) that `match`es. */
const seen = (from: number, match: (m: Message) => boolean) =>
  vi.waitUntil(() => created.slice(from).find(match), { timeout: 5000, interval: 10 });

const image = sampleImagePng();

describe('files with their alt text', () => {
  it('GIVEN an image with alt text THEN the bot gets the attachment with its description; the page serves the file as sent, sandboxed', async () => {
    const from = created.length;
    const sent = await post('/api/message', {
      userId: IDS.alice,
      channelId: IDS.text,
      content: '',
      attachments: [
        { filename: 'sunset.png', contentType: 'image/png', data: image.toString('base64'), description: ' 夕焼けの海 ' },
        // No folders in a name, and no alt text unless written.
        { filename: '../notes\\memo.txt', contentType: 'text/plain', data: Buffer.from('メモ').toString('base64'), description: ' ' },
      ],
    });
    expect(sent.status).toBe(200);
    const message = await seen(from, (m) => m.id === sent.body.id);
    expect(message.attachments.map((a) => [a.name, a.description])).toEqual([
      ['sunset.png', '夕焼けの海'],
      ['.._notes_memo.txt', null],
    ]);
    const attachment = message.attachments.first()!;
    expect([attachment.name, attachment.contentType, attachment.size, attachment.description]).toEqual([
      'sunset.png',
      'image/png',
      image.length,
      '夕焼けの海',
    ]);
    const item = (await timeline()).find((i) => i.id === sent.body.id)!;
    expect(item.attachments).toEqual([
      expect.objectContaining({ filename: 'sunset.png', contentType: 'image/png', size: image.length, description: '夕焼けの海' }),
      expect.not.objectContaining({ description: expect.anything() }),
    ]);
    const file = await get(item.attachments[0].url);
    expect(file.body.equals(image)).toBe(true);
    expect(file.headers.get('content-type')).toBe('image/png');
    expect(file.headers.get('content-security-policy')).toBe('sandbox');
  });

  it('GIVEN the sample image THEN it is a 320 x 180 PNG', async () => {
    const png = await get('/api/sample-image.png');
    expect(png.headers.get('content-type')).toBe('image/png');
    expect(png.body.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect([png.body.readUInt32BE(16), png.body.readUInt32BE(20)]).toEqual([320, 180]);
  });

  it("GIVEN files over Discord's limits THEN each refused naming the limit, and nothing reaches the bot", async () => {
    const file = (over: Record<string, unknown> = {}) => ({ filename: 'a.png', contentType: 'image/png', data: 'iVBORw0K', ...over });
    const cases: Array<[unknown, RegExp]> = [
      [Array.from({ length: 11 }, () => file()), /at most 10 files a message/],
      [[file({ data: Buffer.alloc(10 * 1024 * 1024 + 1).toString('base64') })], /a\.png is over 10 MB/],
      [[file({ description: 'あ'.repeat(1025) })], /alt text is at most 1024 characters/],
      [[file({ data: 'not base64!' })], /a\.png: its data must be base64/],
      [[file({ data: '' })], /a\.png is empty/],
      [[file({ filename: ' ' })], /a file needs a name/],
      ['a.png', /attachments must be a list/],
    ];
    const from = created.length;
    for (const [attachments, message] of cases) {
      const res = await post('/api/message', { userId: IDS.alice, channelId: IDS.text, content: 'x', attachments });
      expect([res.status, res.body.error]).toEqual([400, expect.stringMatching(message)]);
    }
    // The next message is the first the bot hears of since.
    const after = await post('/api/message', { userId: IDS.alice, channelId: IDS.text, content: 'それから' });
    expect((await seen(from, () => true)).id).toBe(after.body.id);
  });
});

describe('polls', () => {
  const vote = (userId: string, messageId: string, answerId: number) => post('/api/poll-vote', { userId, messageId, answerId });
  const pollItem = async (id: string) => (await timeline()).find((i) => i.id === id)!;

  it('GIVEN a poll THEN the bot gets it; one answer per member; only its author ends it early; its end posts the result message', async () => {
    const from = created.length;
    const made = await post('/api/poll', {
      userId: IDS.alice,
      channelId: IDS.text,
      question: ' 昼ごはんは何にする ',
      answers: ['ラーメン', 'カレー', '  '],
      durationHours: 1,
    });
    expect(made.status).toBe(200);
    const message = await seen(from, (m) => m.id === made.body.id);
    expect(message.poll?.question.text).toBe('昼ごはんは何にする');
    expect(message.poll?.answers.map((a) => a.text)).toEqual(['ラーメン', 'カレー']);

    for (const [userId, answer] of [
      [IDS.alice, 1],
      [IDS.taro, 2],
      [IDS.taro, 1], // one answer: カレー gives way to ラーメン
      [IDS.haruka, 2],
      [IDS.haruka, 2], // again: taken back
    ] as const)
      expect((await vote(userId, made.body.id, answer)).status).toBe(200);
    expect((await pollItem(made.body.id)).poll.answers.map((a: { voters: string[] }) => a.voters)).toEqual([[IDS.alice, IDS.taro], []]);

    const stranger = await post('/api/poll-end', { userId: IDS.taro, messageId: made.body.id });
    expect([stranger.status, stranger.body.error]).toEqual([403, "only the poll's author can end it early"]);
    expect((await pollItem(made.body.id)).poll.ended).toBe(false);

    const ended = await post('/api/poll-end', { userId: IDS.alice, messageId: made.body.id });
    expect(ended.status).toBe(200);
    const result = await seen(from, (m) => m.type === MessageType.PollResult);
    expect(result.id).toBe(ended.body.id);
    expect(result.author.id).toBe(IDS.alice);
    const fields = Object.fromEntries(result.embeds[0]!.fields.map((f) => [f.name, f.value]));
    expect(fields).toMatchObject({
      poll_question_text: '昼ごはんは何にする',
      victor_answer_text: 'ラーメン',
      victor_answer_votes: '2',
      total_votes: '2',
    });
    await vi.waitUntil(() => updated.find((m) => m.id === made.body.id && m.poll?.resultsFinalized), { timeout: 5000 });
    expect((await pollItem(made.body.id)).poll.ended).toBe(true);
    expect((await pollItem(ended.body.id)).pollResult).toEqual({
      pollId: made.body.id,
      question: '昼ごはんは何にする',
      winner: 'ラーメン',
      winnerVotes: 2,
      totalVotes: 2,
    });
    // Ended: no more votes, no second end.
    const late = await vote(IDS.haruka, made.body.id, 2);
    expect([late.status, late.body.error]).toEqual([400, 'this poll has ended']);
    expect((await post('/api/poll-end', { userId: IDS.alice, messageId: made.body.id })).status).toBe(400);
  });

  it('GIVEN several answers allowed THEN a member votes for both; a tie has no winner', async () => {
    const from = created.length;
    const made = await post('/api/poll', {
      userId: IDS.taro,
      channelId: IDS.text2,
      question: 'どれが好き',
      answers: ['春', '秋'],
      allowMultiselect: true,
    });
    await vote(IDS.alice, made.body.id, 1);
    await vote(IDS.alice, made.body.id, 2);
    expect((await pollItem(made.body.id)).poll.answers.map((a: { voters: string[] }) => a.voters)).toEqual([[IDS.alice], [IDS.alice]]);
    const ended = await post('/api/poll-end', { userId: IDS.taro, messageId: made.body.id });
    const result = await seen(from, (m) => m.type === MessageType.PollResult);
    expect(result.embeds[0]!.fields.map((f) => f.name)).not.toContain('victor_answer_text');
    expect((await pollItem(ended.body.id)).pollResult).toEqual({
      pollId: made.body.id,
      question: 'どれが好き',
      winnerVotes: 1,
      totalVotes: 2,
    });
  });

  it("GIVEN a poll over Discord's limits THEN refused naming the limit, and nothing reaches the bot", async () => {
    const poll = { userId: IDS.alice, channelId: IDS.text, question: 'q', answers: ['a'] };
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ question: ' ' }, /a poll needs a question/],
      [{ question: 'あ'.repeat(301) }, /question is at most 300 characters/],
      [{ answers: [] }, /a poll has 1 to 10 answers/],
      [{ answers: Array.from({ length: 11 }, (_, i) => `${i}`) }, /a poll has 1 to 10 answers/],
      [{ answers: ['あ'.repeat(56)] }, /an answer is at most 55 characters/],
      [{ durationHours: 5 }, /a poll lasts one of 1, 4, 8, 24, 72, 168, 336 hours/],
    ];
    const from = created.length;
    for (const [change, message] of cases) {
      const res = await post('/api/poll', { ...poll, ...change });
      expect([res.status, res.body.error]).toEqual([400, expect.stringMatching(message)]);
    }
    const unknown = await vote(IDS.alice, '1', 1);
    expect([unknown.status, unknown.body.error]).toEqual([400, 'no such poll']);
    const after = await post('/api/message', { userId: IDS.alice, channelId: IDS.text, content: 'それから' });
    expect((await seen(from, () => true)).id).toBe(after.body.id);
  });
});
