/**
 * onActivity: what the playground page follows. Every change the bot makes (messages created,
 * edited, deleted, ephemeral ones included; reactions; deleting a member's message) and every voice
 * move is reported once, as it happens, and nothing after unsubscribing.
 */
import { MessageFlags, type Client, type TextChannel } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_IDS, startFakeDiscord, type FakeDiscord, type LocalDiscordActivity } from '../src/server.ts';
import { loginClient } from './helpers.ts';

let discord: FakeDiscord;
let client: Client<true>;
const seen: LocalDiscordActivity[] = [];
let unsubscribe: () => void;

beforeAll(async () => {
  discord = await startFakeDiscord();
  unsubscribe = discord.onActivity((a) => seen.push(a));
  client = await loginClient(discord);
});
afterAll(async () => {
  await client?.destroy();
  await discord?.close();
});

const alice = { id: DEFAULT_IDS.alice, username: 'alice' };

describe('onActivity', () => {
  it('GIVEN the bot creates, edits and deletes a message THEN each change is reported with the message as it is then', async () => {
    const reports: Array<{ id: string; content: string; deleted: boolean }> = [];
    const stop = discord.onActivity((a) => {
      if (a.kind === 'message') reports.push({ id: a.message.id, content: a.message.content, deleted: a.message.deleted });
    });
    const channel = (await client.channels.fetch(DEFAULT_IDS.general)) as TextChannel;
    const sent = await channel.send('first');
    await sent.edit('second');
    await sent.delete();
    stop();
    expect(reports).toEqual([
      { id: sent.id, content: 'first', deleted: false },
      { id: sent.id, content: 'second', deleted: false },
      { id: sent.id, content: 'second', deleted: true },
    ]);
  });

  it('GIVEN an ephemeral interaction reply THEN it is reported too, flagged ephemeral', async () => {
    seen.length = 0;
    const replied = new Promise<void>((resolve) => {
      client.once('interactionCreate', async (interaction) => {
        if (interaction.isChatInputCommand()) await interaction.reply({ content: 'secret', flags: MessageFlags.Ephemeral });
        resolve();
      });
    });
    await discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: alice, name: 'anything' });
    await replied;
    const reply = seen.find((a) => a.kind === 'message');
    expect(reply?.kind === 'message' && reply.message.content).toBe('secret');
    expect(reply?.kind === 'message' && reply.message.flags & 64).toBe(64);
  });

  it("GIVEN the bot reacts to and deletes a member's message THEN a reaction and a deletion are reported", async () => {
    seen.length = 0;
    const { id } = await discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content: 'react to me' });
    const channel = (await client.channels.fetch(DEFAULT_IDS.general)) as TextChannel;
    await channel.messages.react(id, '⏳');
    await channel.messages.delete(id);
    expect(seen).toEqual([
      { kind: 'reaction', channelId: DEFAULT_IDS.general, messageId: id, emoji: '⏳' },
      { kind: 'deletion', channelId: DEFAULT_IDS.general, messageId: id },
    ]);
  });

  it('GIVEN a member joins and leaves voice THEN two voice-state changes of the guild are reported; none after unsubscribing', async () => {
    seen.length = 0;
    await discord.setVoiceState(alice.id, DEFAULT_IDS.guild, DEFAULT_IDS.voice);
    expect(discord.guilds[0]!.voiceStates.map((v) => v.userId)).toEqual([alice.id]);
    await discord.setVoiceState(alice.id, DEFAULT_IDS.guild, null);
    expect(seen).toEqual([
      { kind: 'voiceStates', guildId: DEFAULT_IDS.guild },
      { kind: 'voiceStates', guildId: DEFAULT_IDS.guild },
    ]);
    unsubscribe();
    await discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content: 'unheard' });
    const channel = (await client.channels.fetch(DEFAULT_IDS.general)) as TextChannel;
    await channel.send('after unsubscribing');
    expect(seen).toHaveLength(2);
  });
});
