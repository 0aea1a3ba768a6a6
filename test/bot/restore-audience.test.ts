import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { DEFAULT_IDS } from '@yomiage/local-discord';
import { voiceAudience } from '../../src/speech/queue.ts';
import { standardRequests, startHarness, type Harness } from '../support/bot-harness.ts';

// After a restart, what a previous process queued for its voice session is restored while the bot
// is not back in voice: two auto-read channels post MP3s, so each restored line is attached in its
// own channel, and lines merged for the voice session before must not be merged into one file now.
const bob = { id: DEFAULT_IDS.bob, username: 'bob' };
const STAFF = DEFAULT_IDS.chat;
const GENERAL = DEFAULT_IDS.general;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ env: { AUTO_READ_MAX_AGE_SECONDS: '600' } });
  for (const channelId of [STAFF, GENERAL]) {
    const options = [{ name: 'add', type: 1, options: [{ name: 'mp3', type: 5, value: true }] }];
    const i = await h.discord.sendInteraction({ channelId, user: bob, name: 'autoread', locale: 'en-US', options: options as never });
    expect(String((await i.waitForResponse((r) => r.kind === 'callback', 15_000)).data?.content)).toContain('costs characters');
  }
}, 60_000);
afterAll(async () => h?.close());

/** A line the previous process accepted for its voice session, as its journal wrote it. */
function queuedForVoice(id: string, channelId: string, text: string) {
  const meta = JSON.stringify({ delivery: { kind: 'message', channelId, messageId: `m-${id}` }, lang: 'ja' });
  return {
    id,
    guild_id: DEFAULT_IDS.guild,
    user_id: bob.id,
    channel_id: channelId,
    kind: 'auto',
    text,
    lang: 'ja',
    voice: 'ja-JP-Wavenet-B',
    speed: 1,
    pitch: 0,
    meta,
    audience: voiceAudience(DEFAULT_IDS.voice),
    enqueued_at: Date.now(),
    saved_at: Date.now(),
  };
}

describe('a restart restores the queue by audience', () => {
  it('GIVEN a staff line and a #general line queued for a voice session the bot is not back in THEN each is its own request and file', async () => {
    const staffText = 'スタッフ、BANの相談です';
    const generalText = 'みなさん、こんにちは';
    await h.restart({}, async () => {
      const db = openDatabase(join(h.dataDir, 'bot.sqlite3'), { migrate: false });
      const insert = db.prepare(`INSERT INTO pending_utterances
        (id, guild_id, user_id, channel_id, kind, text, lang, voice, speed, pitch, meta, audience, enqueued_at, saved_at)
        VALUES (@id, @guild_id, @user_id, @channel_id, @kind, @text, @lang, @voice, @speed, @pitch, @meta, @audience, @enqueued_at, @saved_at)`);
      insert.run(queuedForVoice('r1', STAFF, staffText));
      insert.run(queuedForVoice('r2', GENERAL, generalText));
      db.close();
    });
    const posted = (id: string) => h.discord.messages.find((m) => m.attachments.length > 0 && m.messageReference?.message_id === `m-${id}`);
    // Delivered in order: once the #general line is posted, the staff line before it was too.
    await vi.waitUntil(() => posted('r2'), { timeout: 20_000, interval: 20, message: 'the restored #general line posted' });
    const texts = standardRequests(h.emulator).map((r) => r.text);
    expect(texts.filter((t) => t.includes(staffText) && t.includes(generalText))).toEqual([]);
    expect(posted('r1')?.channelId).toBe(STAFF);
    expect(posted('r2')!.channelId).toBe(GENERAL);
  }, 60_000);
});
