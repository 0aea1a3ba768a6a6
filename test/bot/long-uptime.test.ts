import { Events, type TextChannel } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { t } from '../../src/i18n/texts.ts';
import { DEFAULT_IDS } from '@yomiage/local-discord';
import { startHarness, type Harness } from '../support/bot-harness.ts';

// What weeks of uptime must not accumulate, and what the bot does when it cannot keep a message:
// the whole bot in this process (real discord.js on the local Discord, the emulator, SQLite).
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
}, 30_000);
afterAll(async () => {
  await h?.close();
});

describe('a bot that runs for weeks', () => {
  it("GIVEN messages arriving in a channel, and the bot posting there THEN the client keeps no message (no copy of every channel's text)", async () => {
    const arrived: string[] = [];
    const onMessage = (m: { id: string }) => void arrived.push(m.id);
    h.bot.client.on(Events.MessageCreate, onMessage);
    try {
      const sent: string[] = [];
      for (let i = 0; i < 5; i++)
        sent.push((await h.discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content: `chat line ${i}` })).id);
      await vi.waitUntil(() => sent.every((id) => arrived.includes(id)), { timeout: 5_000, interval: 5 });
      const channel = h.bot.client.channels.cache.get(DEFAULT_IDS.general) as TextChannel;
      await channel.send({ content: 'a notice' });
      expect(channel.messages.cache.size).toBe(0);
    } finally {
      h.bot.client.off(Events.MessageCreate, onMessage);
    }
  });

  it("GIVEN the disk refusing writes THEN a message to read is refused, its author told why in the server's language, nothing is spent; once the disk takes writes it is read again", async () => {
    await h.bot.context.repos.autoRead.add(DEFAULT_IDS.guild, DEFAULT_IDS.chat, { postAudio: true });
    const requestsBefore = h.emulator.requests().length;
    h.bot.db.pragma('query_only = ON');
    let refused: { id: string };
    try {
      refused = await h.discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: alice, content: 'ほぞんできない' });
      const told = await h.discord.waitForMessage(
        (m) => m.channelId === DEFAULT_IDS.chat && m.messageReference?.message_id === refused.id,
        5_000,
      );
      expect(told.content).toBe(t('ja', 'queue.not_saved'));
    } finally {
      h.bot.db.pragma('query_only = OFF');
    }
    expect(h.emulator.requests().length).toBe(requestsBefore);
    const read = await h.discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: alice, content: 'ほぞんできる' });
    const posted = await h.discord.waitForMessage((m) => m.channelId === DEFAULT_IDS.chat && m.attachments.length > 0, 20_000);
    expect(posted.messageReference?.message_id ?? read.id).toBe(read.id);
  });
});
