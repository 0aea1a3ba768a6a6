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

// Long messages read faster (早口) instead of cut, through the real entry point: `npm start` as a
// child process (its own environment and DATA_DIR, no .env) against the loopback Discord and the
// emulator, one bot for the whole story. #chat is an auto-read channel with MP3 posts, so each
// message read is a request the emulator logs with its text and speed. The server's max length is
// 100 (the default) and its ceiling 2.0 (the default): a message of 150 characters is read whole at
// 1.5x and paid in full by its author, one of 300 is read to 200 at 2x and cut; with the ceiling at
// 1.0 it is cut at 100, as before. An edited message and /say follow the same rule. In Japanese,
// then in English. The emulator holds standard requests while `gate.hold()` is on.
const alice = { id: DEFAULT_IDS.alice, username: 'alice', globalName: 'Alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob', globalName: 'Bob' }; // Manage Server
const dave = { id: '1000000000000000041', username: 'dave' };
const chat = DEFAULT_IDS.chat;
type Option = APIApplicationCommandInteractionDataOption;

/** Standard requests wait (logged, unanswered) until gate.release(). */
const gate = emulatorGate();

let emulator: Emulator;
let discord: FakeDiscord;
let dataDir: string;
let bot: ChildBot;

async function command(name: string, options: Option[], locale: string, user: { id: string; username: string } = bob): Promise<string> {
  const interaction = await discord.sendInteraction({ channelId: chat, user, name, locale, options });
  return String((await interaction.waitForResponse((r) => r.kind === 'callback', 20_000)).data?.content ?? '');
}
const sub = (name: string, options: Option[] = []) => [{ name, type: 1, options } as Option];
const fastReading = (value: number, locale: string) => command('config', sub('fast-reading', [{ name: 'value', type: 10, value }]), locale);

beforeAll(async () => {
  [emulator, discord] = await Promise.all([startEmulator({ ...SHORT_TONES, sleep: gate.sleep }), startFakeDiscord()]);
  emulator.setLatency('standard', 1);
  dataDir = mkdtempSync(join(tmpdir(), 'yomiage-long-messages-'));
  bot = await startChildBot({ discord, emulator, dataDir, env: { AUTO_READ_MAX_AGE_SECONDS: '600', USER_MONTHLY_CHARS: '100000' } });
  expect(await command('autoread', sub('add', [{ name: 'mp3', type: 5, value: true }]), 'en-US')).toContain('costs characters');
}, 60_000);
// A test that failed while holding must not leave the next one's requests unanswered.
afterEach(gate.release);
afterAll(async () => {
  gate.release();
  await bot?.stop('SIGKILL');
  await Promise.all([emulator?.close(), discord?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

/** The standard request that read `fragment` (waited for), with its text and speed. */
function requestFor(fragment: string): Promise<{ text: string; speed: number }> {
  return vi.waitUntil(() => standardRequests(emulator).find((r) => r.text.includes(fragment)), {
    timeout: 20_000,
    interval: 20,
  });
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

let n = 0;
/** A Japanese text of `chars` characters (no run a reader would shorten), told apart by its opening. */
function japanese(chars: number): string {
  const head = `長文${++n}番、`;
  return (head + 'あいうえおかきくけこさしすせそたちつてと'.repeat(30)).slice(0, chars);
}

describe('npm start: a long message is read faster, up to the ceiling, instead of cut', () => {
  it('/config show says what the default ceiling does (ja)', async () => {
    expect(await command('config', sub('show'), 'ja')).toContain(
      '- 早口の上限: 2倍（100文字を超えるメッセージは長さに応じて最大2倍速で読み、200文字を超えた分は省略）',
    );
  });

  it('150 characters are read whole at 1.5x, every character held for and charged to their author', async () => {
    const before = charsOf(alice.id);
    const text = japanese(150);
    await discord.sendMessage({ channelId: chat, author: alice, content: text });
    const req = await requestFor(text.slice(0, 6));
    expect(req.text.endsWith(text)).toBe(true);
    expect(req.speed).toBe(1.5);
    // Alone in its request (its speed is its own): alice pays for all of it (her name read before it too).
    await vi.waitFor(() => expect(charsOf(alice.id) - before).toBe(countChars(req.text)));
  });

  it('300 characters: the first 200 at 2x, then 以下略', async () => {
    const text = japanese(300);
    await discord.sendMessage({ channelId: chat, author: alice, content: text });
    const req = await requestFor(text.slice(0, 6));
    expect(req.text.endsWith(`${text.slice(0, 200)}、以下略`)).toBe(true);
    expect(req.speed).toBe(2);
  });

  it('a message edited into a long one while it waits is read as edited, faster', async () => {
    gate.hold();
    const first = standardRequests(emulator).length;
    await discord.sendMessage({ channelId: chat, author: dave, content: '先に読まれる一言です' });
    await vi.waitUntil(() => standardRequests(emulator).length > first, { timeout: 20_000, interval: 20 });
    const { id } = await discord.sendMessage({ channelId: chat, author: alice, content: '編集前の短い文' });
    const text = japanese(160);
    await discord.editMessage({ channelId: chat, messageId: id, content: text });
    // /help answers after the bot handled the events before it (one connection, in order).
    await command('help', [], 'ja');
    gate.release();
    const req = await requestFor(text.slice(0, 6));
    expect(req.text.endsWith(text)).toBe(true);
    expect(req.speed).toBe(1.6);
    expect(standardRequests(emulator).some((r) => r.text.includes('編集前'))).toBe(false);
  });

  it('/say past the max length is read faster too, on top of the speed asked for', async () => {
    const text = japanese(150);
    await command(
      'say',
      [{ name: 'text', type: 3, value: text } as Option, { name: 'speed', type: 10, value: 1.2 } as Option],
      'ja',
      alice,
    );
    const req = await requestFor(text.slice(0, 6));
    expect([req.text, req.speed]).toEqual([text, 1.8]);
  });

  it('with the ceiling at 1.0 a long message is cut at the max length and read at the normal speed, as before', async () => {
    expect(await fastReading(1, 'ja')).toBe('設定しました: /設定 早口上限 = オフ（100文字を超えた分は省略）');
    const text = japanese(150);
    await discord.sendMessage({ channelId: chat, author: alice, content: text });
    const req = await requestFor(text.slice(0, 6));
    expect(req.text.endsWith(`${text.slice(0, 100)}、以下略`)).toBe(true);
    expect(req.speed).toBe(1);
  });

  it('in English: the ceiling at 3, "and so on" only past 300 characters', async () => {
    expect(await command('config', sub('language', [{ name: 'value', type: 3, value: 'en' }]), 'en-US')).toContain('English');
    expect(await fastReading(3, 'en-US')).toBe(
      'Saved: /config fast-reading = up to 3x (a message over 100 characters is read faster the longer it is, at most 3x; past 300 characters the rest is cut)',
    );
    const words = 'every word of this message is read aloud faster rather than cut short '.repeat(6);
    const long = `Long message ${++n}: ${words}`.slice(0, 250);
    await discord.sendMessage({ channelId: chat, author: alice, content: long });
    const read = await requestFor(long.slice(0, 16));
    expect([read.text.endsWith(long.trim()), read.speed]).toEqual([true, 2.5]);
    // Another member's: alice's waiting characters are capped (500 by default) while hers is not read yet.
    const longer = `Long message ${++n}: ${words}${words}`.slice(0, 400);
    await discord.sendMessage({ channelId: chat, author: dave, content: longer });
    const cut = await requestFor(longer.slice(0, 16));
    expect(cut.text).toMatch(/, and so on$/);
    expect(cut.speed).toBe(3);
  });

  it("what it costs counts against its author's allowance: a long message that does not fit is not sent, and its author is told", async () => {
    const carol = { id: '1000000000000000042', username: 'carol' };
    expect(await command('config', sub('user-limit', [{ name: 'value', type: 4, value: 200 }]), 'en-US')).toContain('200');
    const short = 'Hello, a short one first';
    await discord.sendMessage({ channelId: chat, author: carol, content: short });
    await requestFor(short);
    await vi.waitFor(() => expect(charsOf(carol.id)).toBeGreaterThan(0));
    const spent = charsOf(carol.id);
    const from = standardRequests(emulator).length;
    const told = discord.waitForMessage((m) => m.channelId === chat && m.authorId === DEFAULT_IDS.bot && /limit/i.test(m.content), 20_000);
    const long = `Long message ${++n}: ${'every word of this message is read aloud faster rather than cut short '.repeat(3)}`.slice(0, 200);
    await discord.sendMessage({ channelId: chat, author: carol, content: long });
    expect((await told).content).toMatch(/^You have reached your monthly limit \(\d+ \/ 200 characters/);
    expect(
      standardRequests(emulator)
        .slice(from)
        .some((r) => r.text.includes(long.slice(0, 16))),
    ).toBe(false);
    expect(charsOf(carol.id)).toBe(spent);
  });
});
