import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { APIApplicationCommandInteractionDataOption } from 'discord.js';
import { startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { DEFAULT_IDS, startFakeDiscord, type FakeDiscord } from '@yomiage/local-discord';
import { startChildBot, type ChildBot } from '../support/child-bot.ts';
import { standardRequests } from '../support/bot-harness.ts';

// The core reading controls through the real entry point: `npm start` as a child process (its own
// environment and DATA_DIR, no .env) against the loopback Discord and the emulator. #chat is an
// auto-read channel with MP3 posts, so each message read is a request the emulator logs.
const alice = { id: DEFAULT_IDS.alice, username: 'alice', globalName: 'Alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob', globalName: 'Bob' };
const dave = { id: '1000000000000000041', username: 'dave' };
const WEBHOOK = '1300000000000000088';

let emulator: Emulator;
let discord: FakeDiscord;
let dataDir: string;
let bot: ChildBot;

beforeAll(async () => {
  [emulator, discord] = await Promise.all([startEmulator({ control: true }), startFakeDiscord()]);
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

  it('a role that no longer exists is refused in Japanese and nothing changes', async () => {
    const reply = await command(bob, 'reading', sub('required-role', [{ name: 'role', type: 8, value: '1100000000000000998' }]), 'ja');
    expect(reply).toContain('そのロールはもう存在しません');
    expect(await command(bob, 'reading', sub('show'))).toContain('required role: none');
  });
});
