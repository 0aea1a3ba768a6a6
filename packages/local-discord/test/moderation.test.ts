import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayIntentBits, Options, Partials, type Client, type GuildBan, type Message, type PartialMessage } from 'discord.js';
import { DEFAULT_IDS, startFakeDiscord, type FakeDiscord } from '../src/server.ts';
import { BOT_INTENTS, loginClient } from './helpers.ts';

// Edits, deletions, channel deletion and bans reach discord.js as Discord sends them: ids only (the
// client keeps no messages here, so every one is uncached), each to clients with the intent for it.
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };

let fake: FakeDiscord;
let client: Client<true>;
/** Without GuildModeration: never told of bans. */
let plain: Client<true>;
beforeAll(async () => {
  fake = await startFakeDiscord();
  const uncached = { partials: [Partials.Message], makeCache: Options.cacheWithLimits({ MessageManager: 0 }) };
  client = await loginClient(fake, { ...uncached, intents: [...BOT_INTENTS, GatewayIntentBits.GuildModeration] });
  plain = await loginClient(fake, uncached);
});
afterAll(async () => {
  await Promise.all([client?.destroy(), plain?.destroy()]);
  await fake?.close();
});

const send = (content: string) => fake.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content });

describe('local Discord: what happens to messages after they are sent', () => {
  it('an edit arrives as MESSAGE_UPDATE with the new content, or with ids only when partial', async () => {
    const { id } = await send('before');
    const updated = once(client, 'messageUpdate') as Promise<[PartialMessage, Message]>;
    await fake.editMessage({ channelId: DEFAULT_IDS.general, messageId: id, content: 'after' });
    const [, now] = await updated;
    expect([now.id, now.content, now.editedTimestamp !== null]).toEqual([id, 'after', true]);
    const partial = once(client, 'messageUpdate') as Promise<[PartialMessage, PartialMessage]>;
    await fake.editMessage({ channelId: DEFAULT_IDS.general, messageId: id, content: 'again', partial: true });
    const [, bare] = await partial;
    expect([bare.partial, (await bare.fetch()).content]).toEqual([true, 'again']);
  });

  it('deletions arrive by id, one or in bulk; a deleted channel as CHANNEL_DELETE', async () => {
    const [a, b, c] = [await send('a'), await send('b'), await send('c')];
    const deleted = once(client, 'messageDelete') as Promise<[PartialMessage]>;
    await fake.deleteMessage(DEFAULT_IDS.general, a.id);
    expect((await deleted)[0].id).toBe(a.id);
    const bulk = once(client, 'messageDeleteBulk') as Promise<[Map<string, PartialMessage>]>;
    await fake.bulkDelete(DEFAULT_IDS.general, [b.id, c.id]);
    expect([...(await bulk)[0].keys()]).toEqual([b.id, c.id]);
    const channel = once(client, 'channelDelete');
    await fake.deleteChannel(DEFAULT_IDS.chat);
    expect(((await channel)[0] as { id: string }).id).toBe(DEFAULT_IDS.chat);
  });

  it("a member's roles given or taken arrive as GUILD_MEMBER_UPDATE: the client's cached member follows", async () => {
    const guild = client.guilds.cache.get(DEFAULT_IDS.guild)!;
    const before = await guild.members.fetch(DEFAULT_IDS.alice);
    expect(before.roles.cache.has(DEFAULT_IDS.moderatorRole)).toBe(false);
    const updated = once(client, 'guildMemberUpdate');
    await fake.setMemberRoles(DEFAULT_IDS.guild, DEFAULT_IDS.alice, [DEFAULT_IDS.moderatorRole]);
    await updated;
    expect(guild.members.cache.get(DEFAULT_IDS.alice)!.roles.cache.has(DEFAULT_IDS.moderatorRole)).toBe(true);
    expect(fake.guilds[0]!.members.find((m) => m.user.id === DEFAULT_IDS.alice)!.roles).toEqual([DEFAULT_IDS.moderatorRole]);
    const taken = once(client, 'guildMemberUpdate');
    await fake.setMemberRoles(DEFAULT_IDS.guild, DEFAULT_IDS.alice, []);
    await taken;
    expect(guild.members.cache.get(DEFAULT_IDS.alice)!.roles.cache.has(DEFAULT_IDS.moderatorRole)).toBe(false);
  });

  it('a ban reaches only clients with the GuildModeration intent', async () => {
    const banned = once(client, 'guildBanAdd') as Promise<[GuildBan]>;
    await fake.banMember({ guildId: DEFAULT_IDS.guild, userId: DEFAULT_IDS.bob, deleteMessages: true });
    const [ban] = await banned;
    expect([ban.guild.id, ban.user.id]).toEqual([DEFAULT_IDS.guild, DEFAULT_IDS.bob]);
    const got = [...fake.gateway.sessions.values()].map((s) => [
      (s.intents & (1 << 2)) !== 0,
      s.backlog.some((e) => e.t === 'GUILD_BAN_ADD'),
    ]);
    expect(got.sort()).toEqual([
      [false, false],
      [true, true],
    ]);
  });
});
