import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { APIApplicationCommandInteractionDataOption } from 'discord.js';
import { startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { DEFAULT_IDS, startFakeDiscord, type FakeDiscord } from '@yomiage/local-discord';
import { openDatabase } from '../../src/db/database.ts';
import { countChars } from '../../src/tts/chars.ts';
import { SHORT_TONES, standardRequests } from '../support/bot-harness.ts';
import { startChildBot, type ChildBot } from '../support/child-bot.ts';
import { emulatorGate } from '../support/emulator-gate.ts';

// Images and polls as a screen reader reads them, through the real entry point: `npm start` as a
// child process (its own environment and DATA_DIR, no .env) against the loopback Discord and the
// emulator, one bot for the whole story. #chat is an auto-read channel with MP3 posts, so each
// message read is a request the emulator logs. An image's alt text is read instead of its kind
// (and its words can be fixed from the message's Apps menu, as its content's can); a poll's end is read (question, winner, votes) and paid for by the poll's author; a result whose
// poll is deleted before it is read is never sent. In Japanese, then in English. The emulator
// holds standard requests while `gate.hold()` is on, so a result can wait in the bot's queue.
const alice = { id: DEFAULT_IDS.alice, username: 'alice', globalName: 'Alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob', globalName: 'Bob' }; // Manage Server
const dave = { id: '1000000000000000041', username: 'dave' };
const chat = DEFAULT_IDS.chat;

/** Standard requests wait (logged, unanswered) until gate.release(). */
const gate = emulatorGate();

let emulator: Emulator;
let discord: FakeDiscord;
let dataDir: string;
let bot: ChildBot;

async function command(name: string, options: APIApplicationCommandInteractionDataOption[], channelId: string = chat): Promise<string> {
  const interaction = await discord.sendInteraction({ channelId, user: bob, name, locale: 'en-US', options });
  return String((await interaction.waitForResponse((r) => r.kind === 'callback', 20_000)).data?.content ?? '');
}
const sub = (name: string, options: APIApplicationCommandInteractionDataOption[] = []) => [
  { name, type: 1, options } as APIApplicationCommandInteractionDataOption,
];

beforeAll(async () => {
  [emulator, discord] = await Promise.all([startEmulator({ ...SHORT_TONES, sleep: gate.sleep }), startFakeDiscord()]);
  emulator.setLatency('standard', 1);
  dataDir = mkdtempSync(join(tmpdir(), 'yomiage-images-polls-'));
  bot = await startChildBot({ discord, emulator, dataDir, env: { AUTO_READ_MAX_AGE_SECONDS: '600' } });
  expect(await command('autoread', sub('add', [{ name: 'mp3', type: 5, value: true }]))).toContain('costs characters');
}, 60_000);
// A test that failed while holding must not leave the next one's requests unanswered.
afterEach(gate.release);
afterAll(async () => {
  gate.release();
  await bot?.stop('SIGKILL');
  await Promise.all([emulator?.close(), discord?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

let marker = 0;
/** What the emulator was asked to speak from `send` up to a marker message by dave (always read). */
async function spokenAround(send: () => Promise<unknown>): Promise<string> {
  const before = standardRequests(emulator).length;
  await send();
  const mark = `確認用${++marker}です`;
  await discord.sendMessage({ channelId: chat, author: dave, content: mark });
  return vi.waitUntil(
    () => {
      const texts = standardRequests(emulator)
        .slice(before)
        .map((r) => r.text)
        .join('|');
      return texts.includes(mark) ? texts : undefined;
    },
    { timeout: 20_000, interval: 20, message: mark },
  );
}

/** Characters held or charged to `userId` in the server, as the bot's ledger says (read as another process would). */
function charsOf(userId: string): number {
  const db = openDatabase(join(dataDir, 'bot.sqlite3'), { migrate: false });
  try {
    return db
      .prepare(
        "SELECT COALESCE(SUM(chars), 0) FROM character_ledger WHERE guild_id = ? AND user_id = ? AND state IN ('reserved', 'charged')",
      )
      .pluck()
      .get(DEFAULT_IDS.guild, userId) as number;
  } finally {
    db.close();
  }
}

const photos = (alt: string) =>
  discord.sendMessage({
    channelId: chat,
    author: alice,
    content: '',
    attachments: [
      { filename: 'IMG_0001.jpg', content_type: 'image/jpeg', description: alt },
      { filename: 'IMG_0002.jpg', content_type: 'image/jpeg' },
      { filename: 'IMG_0003.jpg', content_type: 'image/jpeg' },
    ],
  });
const poll = (question: string, answers: string[]) =>
  discord.sendMessage({ channelId: chat, author: alice, content: '', poll: { question, answers } });

describe('npm start: images by their alt text, polls when they end', () => {
  it('an image with alt text is read by it, with no URL or mention of it aloud; the others by kind', async () => {
    const spoken = await spokenAround(() => photos('夕焼けの海 https://example.com/photo?id=123456789012345678 <@1000000000000000003>'));
    expect(spoken).toContain('画像: 夕焼けの海 URL省略 ユーザー、画像2枚');
    expect(spoken).not.toMatch(/example|\d{6,}|<@/);
  });

  it("Apps > Fix reading on an image offers its alt text's words, and the fix is read", async () => {
    const { id } = await photos('御徒町の駅');
    const i = await discord.sendInteraction({ channelId: chat, user: alice, name: 'Fix reading', locale: 'ja', target: { messageId: id } });
    const modal = await i.waitForResponse((r) => r.kind === 'callback', 20_000);
    const rows = (modal.data?.components ?? []) as Array<{ components: Array<{ custom_id: string; label: string }> }>;
    const field = rows.map((row) => row.components[0]!).find((c) => c.label === '御徒町');
    expect(field).toBeDefined();
    const s = await discord.sendInteraction({
      type: 5,
      channelId: chat,
      user: alice,
      name: '',
      locale: 'ja',
      modal: { interactionId: i.id, values: { [field!.custom_id]: 'おかちまち' } },
    });
    expect(String((await s.waitForResponse((r) => r.kind === 'callback', 20_000)).data?.content)).toContain('御徒町 → おかちまち');
    expect(await spokenAround(() => photos('御徒町の駅'))).toContain('画像: おかちまちの駅');
  });

  it("a poll's end is read with its winner and votes, and the poll's author pays for it", async () => {
    const { id } = await poll('昼ごはんは何にする', ['ラーメン', 'カレー', 'そば']);
    await spokenAround(async () => undefined); // the poll itself, read and paid for first
    const paid = charsOf(alice.id);
    const spoken = await spokenAround(() => discord.endPoll({ channelId: chat, messageId: id, votes: [3, 1, 0] }));
    const result = '投票結果、昼ごはんは何にする、1位はラーメン、全4票中3票';
    expect(spoken).toContain(result);
    // Nobody else wrote meanwhile: what alice's ledger grew by is the result (a pause at most besides).
    await vi.waitFor(() => expect(charsOf(alice.id) - paid).toBeGreaterThanOrEqual(countChars(result)));
    expect(charsOf(alice.id) - paid).toBeLessThanOrEqual(countChars(result) + 1);
  });

  it('a result whose poll is deleted before it is read is never sent', async () => {
    const { id } = await poll('消される投票の質問', ['はい', 'いいえ']);
    await spokenAround(async () => undefined);
    const from = standardRequests(emulator).length;
    gate.hold();
    await discord.sendMessage({ channelId: chat, author: dave, content: '先に読まれる発言です' });
    await vi.waitUntil(() => standardRequests(emulator).length > from, { timeout: 20_000, interval: 20 });
    await discord.endPoll({ channelId: chat, messageId: id, votes: [1, 0] });
    await discord.deleteMessage(chat, id);
    // /help answers after the bot handled the events before it (one connection, in order).
    const help = await discord.sendInteraction({ channelId: chat, user: bob, name: 'help', locale: 'en-US' });
    await help.waitForResponse((r) => r.kind === 'callback', 20_000);
    gate.release();
    expect(await spokenAround(async () => undefined)).not.toContain('消される投票');
  });

  it('in English: "image: …" and "Poll results: … Winner: …"', async () => {
    expect(await command('config', sub('language', [{ name: 'value', type: 3, value: 'en' }]))).toContain('English');
    expect(await spokenAround(() => photos('sunset over the sea'))).toContain('image: sunset over the sea, 2 images');
    const { id } = await poll('Lunch?', ['Ramen', 'Curry']);
    const spoken = await spokenAround(() => discord.endPoll({ channelId: chat, messageId: id, votes: [1, 2] }));
    expect(spoken).toContain('Poll results: Lunch? Winner: Curry, 2 of 3 votes');
  });
});
