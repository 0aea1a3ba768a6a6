import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { DEFAULT_IDS, startFakeDiscord, type FakeDiscord } from '@yomiage/local-discord';
import { startFakeVoiceServer, type FakeVoiceServer } from '@yomiage/local-discord';
import { mp3DurationOf, standardRequests } from '../support/bot-harness.ts';
import { startChildBot, type ChildBot } from '../support/child-bot.ts';
import { emulatorGate } from '../support/emulator-gate.ts';

// Moderation follows the chat, through `npm start` as a child process (loopback Discord, emulator,
// voice server): a message deleted before it is read is never read, nor sent to the service if it
// was not yet; an edited one is read as edited; bulk deletes and bans likewise; a deleted message
// playing stops at once; and what was deleted is not restored after a restart. #chat is an
// auto-read channel with MP3 posts, so what is read is a request the emulator logs and an
// attachment replying to the (last) message read. The emulator holds standard requests while
// `gate.hold()` is on, so messages wait in the bot's queue behind one being synthesised.
const alice = { id: DEFAULT_IDS.alice, username: 'alice', globalName: 'Alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob', globalName: 'Bob' };
const dave = { id: '1000000000000000041', username: 'dave' };
const chat = DEFAULT_IDS.chat;
/** A second MP3 auto-read channel, deleted by a moderator in one test. */
const doomed = '1100000000000000199';

/** Standard requests wait (logged, unanswered) until gate.release(). */
const gate = emulatorGate();

let emulator: Emulator;
let discord: FakeDiscord;
let voice: FakeVoiceServer;
let dataDir: string;
let bot: ChildBot;
const start = () => startChildBot({ discord, emulator, dataDir, caCertPem: voice.caCertPem, env: { AUTO_READ_MAX_AGE_SECONDS: '600' } });

beforeAll(async () => {
  voice = await startFakeVoiceServer();
  [emulator, discord] = await Promise.all([
    // Shorter tones than the default (0.12 s a character): only the message deleted while it
    // plays needs length, and its text is long enough to play for about 4.5 s with them.
    startEmulator({ secondsPerChar: 0.05, sleep: gate.sleep }),
    startFakeDiscord({ voiceEndpoint: () => voice.endpoint }),
  ]);
  emulator.setLatency('standard', 1);
  discord.guilds[0]!.channels.push({ id: doomed, name: 'doomed', type: 0 });
  dataDir = mkdtempSync(join(tmpdir(), 'yomiage-deleted-'));
  bot = await start();
  for (const channelId of [chat, doomed]) {
    const add = await discord.sendInteraction({
      channelId,
      user: bob,
      name: 'autoread',
      locale: 'en-US',
      options: [{ name: 'add', type: 1, options: [{ name: 'mp3', type: 5, value: true }] }],
    });
    expect(String((await add.waitForResponse((r) => r.kind === 'callback', 20_000)).data?.content)).toContain('costs characters');
  }
}, 60_000);
// A test that failed while holding must not leave the next one's requests unanswered.
afterEach(gate.release);
afterAll(async () => {
  gate.release();
  await bot?.stop('SIGKILL');
  await Promise.all([emulator?.close(), discord?.close(), voice?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

const texts = (from: number) =>
  standardRequests(emulator)
    .slice(from)
    .map((r) => r.text);
const post = (author: { id: string; username: string }, content: string, channelId: string = chat) =>
  discord.sendMessage({ channelId, author, content });
const until = <T>(what: string, find: () => T | undefined | false) => vi.waitUntil(find, { timeout: 20_000, interval: 20, message: what });
/** Waits until the emulator has been asked (and holds) a request reading `text`. */
const asked = (from: number, text: string) => until(`a request with ${text}`, () => texts(from).some((t) => t.includes(text)));
/**
 * Resolves once the bot has handled every gateway event sent before it: it answers /help, sent
 * after them on the same connection (events are handled in order; a deletion synchronously).
 */
async function handled(): Promise<void> {
  const help = await discord.sendInteraction({ channelId: chat, user: bob, name: 'help', locale: 'en-US' });
  await help.waitForResponse((r) => r.kind === 'callback', 20_000);
}
/** The bot's MP3 posts replying to `messageId`. */
const repliesTo = (messageId: string) =>
  discord.messages.filter((m) => m.messageReference?.message_id === messageId && m.attachments.length > 0);

describe('npm start: deleted and edited messages', () => {
  it('a message deleted while queued is never sent nor posted; the others are', async () => {
    const from = standardRequests(emulator).length;
    gate.hold();
    await post(alice, '最初の発言です');
    await asked(from, '最初の発言です');
    await post(bob, '残る発言その一');
    const gone = await post(alice, '削除される発言');
    const last = await post(bob, '残る発言その二');
    await discord.deleteMessage(chat, gone.id);
    await handled();
    gate.release();
    await until('the rest read', () => repliesTo(last.id).length > 0);
    expect(texts(from).join('|')).toContain('残る発言その一');
    expect(texts(from).join('|')).not.toContain('削除される発言');
    expect(repliesTo(gone.id)).toHaveLength(0);
  });

  it('bulk deletes, a deleted channel and a ban take their queued messages along (the ban without any MESSAGE_DELETE)', async () => {
    const from = standardRequests(emulator).length;
    gate.hold();
    await post(alice, '二番目の先頭です');
    await asked(from, '二番目の先頭です');
    const spam = [await post(bob, '一括削除その一'), await post(alice, '一括削除その二')];
    await post(dave, '追放される人の発言');
    await post(bob, '消えるチャンネルの発言', doomed);
    const last = await post(alice, '一括のあとに残る発言');
    await discord.bulkDelete(
      chat,
      spam.map((m) => m.id),
    );
    await discord.deleteChannel(doomed);
    await discord.banMember({ guildId: DEFAULT_IDS.guild, userId: dave.id, deleteMessages: true });
    await handled();
    gate.release();
    await until('the rest read', () => repliesTo(last.id).length > 0);
    const sent = texts(from).join('|');
    for (const gone of ['一括削除', '追放される人', '消えるチャンネル']) expect(sent).not.toContain(gone);
  });

  it('an edited queued message is read as edited, through the same reading rules (dictionary, name)', async () => {
    const dict = await discord.sendInteraction({
      channelId: chat,
      user: bob,
      name: 'dictionary',
      locale: 'en-US',
      options: [
        {
          name: 'add',
          type: 1,
          options: [
            { name: 'word', type: 3, value: 'ASAP' },
            { name: 'reading', type: 3, value: 'いそいで' },
          ],
        },
      ],
    });
    await dict.waitForResponse((r) => r.kind === 'callback', 20_000);
    const from = standardRequests(emulator).length;
    gate.hold();
    await post(bob, '三番目の先頭です');
    await asked(from, '三番目の先頭です');
    const edited = await post(alice, '編集前の誤字');
    await discord.editMessage({ channelId: chat, messageId: edited.id, content: '編集後の文 ASAP' });
    await handled();
    gate.release();
    await until('the edit read', () => repliesTo(edited.id).length > 0);
    expect(texts(from).join('|')).toContain('編集後の文 いそいで');
    expect(texts(from).join('|')).not.toContain('編集前');
  });
  it('after a restart nothing deleted comes back; messages no longer cached are still taken back, from a request being made too', async () => {
    const from = standardRequests(emulator).length;
    gate.hold();
    await post(alice, '再起動前の先頭');
    await asked(from, '再起動前の先頭');
    const gone = await post(bob, '再起動前に削除');
    await post(alice, '再起動後も残る');
    const later = await post(bob, '再起動後に削除');
    const edited = await post(alice, '再起動後に編集');
    await discord.deleteMessage(chat, gone.id);
    await handled();
    await bot.stop('SIGTERM');
    gate.release();
    // A new process takes the queue back from disk; none of these messages is in its cache.
    const restarted = standardRequests(emulator).length;
    gate.hold();
    bot = await start();
    // Four come back from disk: the deleted one is not among them.
    expect((await bot.waitForLog((l) => l.msg === 'bot ready')).restored).toBe(4);
    await asked(restarted, '再起動後に削除');
    // The request being made carries it: it is dropped and the rest asked for anew, without it.
    const n = texts(restarted).length;
    await discord.deleteMessage(chat, later.id);
    const without = (t: string) => t.includes('再起動後に編集') && !t.includes('再起動後に削除');
    await until('a request without the deleted message', () => texts(restarted).slice(n).some(without));
    // An update without content (ids and edit time only): the bot fetches the message.
    await discord.editMessage({ channelId: chat, messageId: edited.id, content: '編集された本文', partial: true });
    await asked(restarted, '編集された本文');
    gate.release();
    await until('the rest read', () => repliesTo(edited.id).length > 0);
    const after = texts(restarted);
    expect(after.join('|')).not.toContain('再起動前に削除');
    // The requests that carried the deleted and the old text were dropped; their audio is never posted.
    expect(after.at(-1)).toMatch(/再起動前の先頭.*再起動後も残る.*編集された本文/);
    expect(after.at(-1)).not.toMatch(/再起動後に削除|再起動後に編集/);
    expect(repliesTo(edited.id)).toHaveLength(1);
  });

  it('deleted or edited while the bot is stopped (Discord replays no such event): not read, or read as edited, after the restart', async () => {
    const from = standardRequests(emulator).length;
    gate.hold();
    await post(bob, '停止前の先頭');
    await asked(from, '停止前の先頭');
    const gone = await post(alice, '停止中に削除される発言');
    const edited = await post(bob, '停止中に編集される発言');
    const last = await post(alice, '停止後も残る発言');
    await handled();
    await bot.stop('SIGTERM');
    gate.release();
    // Nobody is connected: the bot hears none of this.
    await discord.deleteMessage(chat, gone.id);
    await discord.editMessage({ channelId: chat, messageId: edited.id, content: '停止中に直した本文' });
    const restarted = standardRequests(emulator).length;
    bot = await start();
    await until('the rest read', () => repliesTo(last.id).length > 0);
    const sent = texts(restarted).join('|');
    expect(sent).toContain('停止中に直した本文');
    expect(sent).toContain('停止後も残る発言');
    expect(sent).not.toContain('停止中に削除');
    expect(sent).not.toContain('停止中に編集される');
    expect(repliesTo(gone.id)).toHaveLength(0);
  });

  it('a message deleted while it plays in voice stops at once', async () => {
    const guildId = DEFAULT_IDS.guild;
    await discord.setVoiceState(alice.id, guildId, DEFAULT_IDS.voice);
    voice.simulateListener({ guildId, channelId: DEFAULT_IDS.voice, userId: alice.id });
    const joined = await discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: alice, name: 'join', locale: 'en-US' });
    expect(String((await joined.waitForResponse((r) => r.kind === 'editOriginal', 30_000)).data?.content)).toContain('Joined');
    await voice.waitForDave(guildId);
    const started = performance.now();
    // Half a second of it heard (25 frames of 20 ms) before the delete.
    let frames = 0;
    const heard = voice.waitForEvent(
      'packet',
      (p) => p.guildId === guildId && !p.silent && p.receivedAt >= started && ++frames >= 25,
      30_000,
    );
    const long = await post(
      alice,
      'これはとても長い発言です。削除されるまで読み続けます。まだまだ続きます。'.repeat(2),
      DEFAULT_IDS.general,
    );
    await heard;
    await discord.deleteMessage(DEFAULT_IDS.general, long.id);
    const cut = await until('the utterance cut short', () => voice.utterances(guildId).find((u) => u.start >= started && u.complete));
    const text = standardRequests(emulator).find((r) => r.text.includes('削除されるまで'))!.text;
    expect(cut.durationMs).toBeLessThan((await mp3DurationOf(emulator, text)) * 0.7);
  }, 60_000);
});
