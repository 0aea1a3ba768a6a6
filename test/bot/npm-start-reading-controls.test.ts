import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { APIApplicationCommandInteractionDataOption } from 'discord.js';
import { startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { DEFAULT_IDS, startFakeDiscord, type FakeDiscord } from '@yomiage/local-discord';
import { startChildBot, type ChildBot } from '../support/child-bot.ts';
import { SHORT_TONES, standardRequests } from '../support/bot-harness.ts';

// The core reading controls, Fix reading and the personal dictionaries through the real entry point:
// `npm start` as a child process (its own environment and DATA_DIR, no .env) against the loopback
// Discord and the emulator, one bot for the whole story. #chat is an auto-read channel with MP3 posts,
// so each message read is a request the emulator logs. alice has no special permission (her fixes go
// to her own dictionary); bob has Manage Server (his go to the server's). The Fix reading tests run
// first: alice's chosen name (/voice name, below) would otherwise replace the name her dictionary reads.
const alice = { id: DEFAULT_IDS.alice, username: 'alice', globalName: 'Alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob', globalName: 'Bob' };
const dave = { id: '1000000000000000041', username: 'dave' };
const WEBHOOK = '1300000000000000088';
type User = typeof alice | typeof bob | typeof dave;
type Option = APIApplicationCommandInteractionDataOption;

let emulator: Emulator;
let discord: FakeDiscord;
let dataDir: string;
let bot: ChildBot;

beforeAll(async () => {
  [emulator, discord] = await Promise.all([startEmulator({ ...SHORT_TONES, control: true }), startFakeDiscord()]);
  dataDir = mkdtempSync(join(tmpdir(), 'yomiage-reading-'));
  bot = await startChildBot({ discord, emulator, dataDir, env: { AUTO_READ_MAX_AGE_SECONDS: '600' } });
  expect(
    await command(bob, 'autoread', [{ name: 'add', type: 1, options: [{ name: 'mp3', type: 5, value: true }] }], 'en-US', DEFAULT_IDS.chat),
  ).toContain('costs characters');
}, 60_000);
afterAll(async () => {
  await bot?.stop('SIGKILL');
  await Promise.all([emulator?.close(), discord?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

async function command(
  user: { id: string; username: string },
  name: string,
  options: APIApplicationCommandInteractionDataOption[],
  locale = 'en-US',
  channelId: string = DEFAULT_IDS.general,
): Promise<string> {
  const interaction = await discord.sendInteraction({ channelId, user, name, locale, options });
  return String((await interaction.waitForResponse((r) => r.kind === 'callback', 20_000)).data?.content ?? '');
}
const sub = (name: string, options: APIApplicationCommandInteractionDataOption[] = []) => [
  { name, type: 1, options } as APIApplicationCommandInteractionDataOption,
];

let marker = 0;
/** What the emulator was asked to speak from `send` up to a marker message by dave (always read). */
async function spokenAround(send: () => Promise<unknown>): Promise<string> {
  const before = standardRequests(emulator).length;
  await send();
  const mark = `確認用${++marker}です`;
  await discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: dave, content: mark });
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
const post =
  (author: { id: string; username: string; bot?: boolean }, content: string, extra: Record<string, unknown> = {}) =>
  () =>
    discord.sendMessage({ channelId: DEFAULT_IDS.chat, author, content, ...extra });

async function respond(user: User, name: string, options: Option[], channelId: string = DEFAULT_IDS.general, locale = 'en-US') {
  const i = await discord.sendInteraction({ channelId, user, name, locale, options });
  return i.waitForResponse((r) => r.kind === 'callback', 20_000);
}
const dictionary = (sub: string, options: Option[]) => [{ name: sub, type: 1, options } as Option];

/** What the emulator was asked to speak for `content`, posted in #chat by `author`. */
async function readAloud(author: User, content: string): Promise<string> {
  const before = standardRequests(emulator).length;
  const marker = content.slice(-4);
  await discord.sendMessage({ channelId: DEFAULT_IDS.chat, author, content });
  return vi.waitUntil(
    () =>
      standardRequests(emulator)
        .slice(before)
        .map((r) => r.text)
        .find((text) => text.endsWith(marker)),
    { timeout: 20_000, interval: 20, message: content },
  );
}

/** Apps > Fix reading on a message in #chat: the modal the bot opened, as { word: text input custom_id }. */
async function openFix(user: User, messageId: string, locale: string) {
  const i = await discord.sendInteraction({ channelId: DEFAULT_IDS.chat, user, name: 'Fix reading', locale, target: { messageId } });
  const modal = await i.waitForResponse((r) => r.kind === 'callback', 20_000);
  const rows = (modal.data?.components ?? []) as Array<{ components: Array<{ custom_id: string; label: string }> }>;
  const fields = Object.fromEntries(rows.map((row) => [row.components[0]!.label, row.components[0]!.custom_id]));
  return { i, modal, fields };
}
async function submitFix(user: User, opened: Awaited<ReturnType<typeof openFix>>, readings: Record<string, string>, locale: string) {
  const values = Object.fromEntries(Object.entries(readings).map(([word, reading]) => [opened.fields[word]!, reading]));
  const s = await discord.sendInteraction({
    type: 5,
    channelId: DEFAULT_IDS.chat,
    user,
    name: '',
    locale,
    modal: { interactionId: opened.i.id, values },
  });
  return s.waitForResponse((r) => r.kind === 'callback', 20_000);
}

describe('Fix reading and personal dictionaries through npm start', () => {
  it("a member fixes a misread word from the message's menu: saved to their own dictionary, their next message carries it", async () => {
    const content = '明日は御徒町でGitHubの会です';
    expect(await readAloud(alice, content)).toContain('御徒町');
    const { id } = await discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: alice, content: `${content}。` });
    const opened = await openFix(alice, id, 'ja');
    // A modal (callback 9) offering the kanji runs and Latin words, longest first, each with a reading field.
    expect(opened.modal.type).toBe(9);
    expect(opened.modal.data?.title).toBe('読みを修正');
    expect(Object.keys(opened.fields)).toEqual(['GitHub', '御徒町', '明日', '会']);
    const saved = await submitFix(alice, opened, { 御徒町: 'おかちまち' }, 'ja');
    expect(saved.type).toBe(4);
    expect(saved.data?.flags).toBe(64);
    expect(String(saved.data?.content)).toContain('自分の辞書に登録しました');
    expect(String(saved.data?.content)).toContain('御徒町 → おかちまち');
    expect(await readAloud(alice, '御徒町で会いましょう')).toContain('おかちまち');
    // Hers only: someone else's message keeps the old reading.
    expect(await readAloud(dave, '御徒町は近いです')).toContain('御徒町');
  }, 60_000);

  it('a dictionary editor fixes it for the server; a reading is refused as /dictionary add refuses it; a covered word is not offered', async () => {
    const { id } = await discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: dave, content: '蒲田駅に着いた' });
    const opened = await openFix(bob, id, 'en-US');
    expect(Object.keys(opened.fields)).toEqual(['蒲田駅', '着']);
    const refused = await submitFix(bob, opened, { 蒲田駅: 'https://example.com' }, 'en-US');
    expect(refused.data?.flags).toBe(64);
    expect(String(refused.data?.content)).toBe('Cannot save the reading of 蒲田駅: The reading cannot contain a URL. Nothing was saved.');
    // Where a fix is saved follows who submits it, never the modal: the same form from a member without the right is theirs alone.
    const forged = await submitFix(alice, opened, { 蒲田駅: 'かまだえき' }, 'en-US');
    expect(String(forged.data?.content)).toContain('Saved to your own dictionary');
    const again = await openFix(bob, id, 'en-US');
    const saved = await submitFix(bob, again, { 蒲田駅: 'かまたえき' }, 'en-US');
    expect(String(saved.data?.content)).toBe("Saved to the server's dictionary:\n蒲田駅 → かまたえき");
    expect(await readAloud(dave, '蒲田駅で待っています')).toContain('かまたえき');
    // Covered now: the modal offers only what is left.
    expect(Object.keys((await openFix(alice, id, 'en-US')).fields)).toEqual(['着']);
  }, 60_000);

  it("/dictionary scope:me: anyone's own entries, for their messages and name; the server's entry wins a word both define", async () => {
    const mine = (word: string, reading: string) =>
      respond(
        alice,
        'dictionary',
        dictionary('add', [
          { name: 'word', type: 3, value: word },
          { name: 'reading', type: 3, value: reading },
          { name: 'scope', type: 3, value: 'me' },
        ]),
      );
    // The server's dictionary stays the editors'; her own is hers.
    const server = await respond(
      alice,
      'dictionary',
      dictionary('add', [
        { name: 'word', type: 3, value: 'GPU' },
        { name: 'reading', type: 3, value: 'x' },
      ]),
    );
    expect(String(server.data?.content)).toContain('Manage Server');
    expect(String((await mine('Alice', 'ありす')).data?.content)).toContain('Added to your own dictionary');
    await mine('GPU', 'ぐぷ');
    const list = await respond(alice, 'dictionary', dictionary('list', [{ name: 'scope', type: 3, value: 'me' }]));
    expect(list.data?.flags).toBe(64);
    expect(String(list.data?.content)).toContain('GPU → ぐぷ');
    expect(String(list.data?.content)).toContain('御徒町 → おかちまち');
    expect(await readAloud(alice, 'GPUを買いました')).toMatch(/^ありす.*ぐぷを買いました$/);
    await respond(
      bob,
      'dictionary',
      dictionary('add', [
        { name: 'word', type: 3, value: 'gpu' },
        { name: 'reading', type: 3, value: 'ジーピーユー' },
      ]),
    );
    expect(await readAloud(alice, 'GPUを売りました')).toContain('ジーピーユーを売りました');
    const removed = await respond(
      alice,
      'dictionary',
      dictionary('remove', [
        { name: 'word', type: 3, value: 'Alice' },
        { name: 'scope', type: 3, value: 'me' },
      ]),
    );
    expect(String(removed.data?.content)).toBe('Removed from your own dictionary: Alice');
  }, 60_000);
});

describe('reading controls through npm start', () => {
  it('/config mute: a muted member is not read; unmuted, read again', async () => {
    expect(
      await command(
        bob,
        'config',
        sub('mute', [
          { name: 'member', type: 6, value: alice.id },
          { name: 'muted', type: 5, value: true },
        ]),
        'ja',
      ),
    ).toContain('読み上げないように');
    expect(await spokenAround(post(alice, 'ミュートされた発言'))).not.toContain('ミュートされた発言');
    await command(
      bob,
      'config',
      sub('mute', [
        { name: 'member', type: 6, value: alice.id },
        { name: 'muted', type: 5, value: false },
      ]),
    );
    expect(await spokenAround(post(alice, 'ミュート解除された発言'))).toContain('ミュート解除された発言');
  });

  it('/voice name: the member is read by the name they chose', async () => {
    expect(await command(alice, 'voice', sub('name', [{ name: 'reading', type: 3, value: 'アリス' }]), 'ja')).toContain('「アリス」');
    expect(await spokenAround(post(alice, '名前を変えました'))).toContain('アリス、名前を変えました');
  });

  it('/reading bots and bot-add: an allowed webhook is read, nothing from bots before', async () => {
    const webhook = { id: WEBHOOK, username: 'News', bot: true };
    expect(await spokenAround(post(webhook, '許可前の記事', { webhookId: WEBHOOK }))).not.toContain('許可前の記事');
    await command(bob, 'reading', sub('bots', [{ name: 'value', type: 3, value: 'listed' }]));
    expect(await command(bob, 'reading', sub('bot-add', [{ name: 'id', type: 3, value: WEBHOOK }]))).toContain('now allowed');
    expect(await spokenAround(post(webhook, '許可後の記事', { webhookId: WEBHOOK }))).toContain('許可後の記事');
  });

  it('/reading emoji: emoji read by their Japanese names, a run once; forwards read after a lead-in', async () => {
    await command(bob, 'reading', sub('emoji', [{ name: 'value', type: 5, value: true }]));
    const emoji = await spokenAround(post(bob, 'ばんごはん🍣🍣🍣'));
    expect(emoji).toContain('ばんごはんすし');
    expect(emoji).not.toContain('すしすし');
    expect(await spokenAround(post(bob, '', { forward: { content: '転送されたお知らせ' } }))).toContain('転送、転送されたお知らせ');
  });

  it('links typed without a scheme, navigation mentions and repeated custom emoji reach the service with no id or query string', async () => {
    const spoken = await spokenAround(
      post(
        bob,
        'これ youtu.be/dQw4w9WgXcQ?t=42 と discord.gg/abcd?event=123456789012345678 <id:linked-roles:123456789012345678> <:pepe:1234567890><:pepe:1234567890> すごい～',
      ),
    );
    expect(spoken).toContain('これ URL省略 と 招待リンク pepe すごい〜');
    expect(spoken).not.toMatch(/dQw4|event=|linked|\d{6,}|pepe\s*pepe|~/);
  });

  it('a role that no longer exists is refused in Japanese and nothing changes', async () => {
    const reply = await command(bob, 'reading', sub('required-role', [{ name: 'role', type: 8, value: '1100000000000000998' }]), 'ja');
    expect(reply).toContain('そのロールはもう存在しません');
    expect(await command(bob, 'reading', sub('show'))).toContain('required role: none');
  });
});
