import { once } from 'node:events';
import type { Client, Message } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { shardOf } from '../src/gateway.ts';
import { DEFAULT_IDS, guildOnShard, startFakeDiscord, type FakeDiscord, type FakeGuild } from '../src/server.ts';
import { loginClient } from './helpers.ts';

// The local Discord reports several shards and routes every guild by Discord's
// formula, (guild_id >> 22) % shard_count, for READY, GUILD_CREATE, events and voice.
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };

describe('the shard rule (pure)', () => {
  it('GIVEN a guild id THEN its shard is (id >> 22) % count', () => {
    // 175928847299117063 is Discord's documentation example: (id >> 22) = 41944705796.
    expect(shardOf('175928847299117063', 16)).toBe(41944705796 % 16);
    expect(shardOf(DEFAULT_IDS.guild, 1)).toBe(0);
    for (const shard of [0, 1, 2]) expect(shardOf(guildOnShard(shard, 3, 5).id, 3)).toBe(shard);
  });
});

describe('a local Discord of two shards', () => {
  let fake: FakeDiscord;
  let guilds: [FakeGuild, FakeGuild];
  const clients: Client[] = [];

  beforeAll(async () => {
    guilds = [guildOnShard(0, 2), guildOnShard(1, 2)];
    fake = await startFakeDiscord({ shardCount: 2, guilds });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.destroy()));
    await fake.close();
  });

  it('GET /gateway/bot recommends 2 shards; an id outside the count is closed with 4010', async () => {
    const res = await fetch(`${fake.apiUrl}/v10/gateway/bot`, { headers: { authorization: `Bot ${fake.token}` } });
    expect(((await res.json()) as { shards: number }).shards).toBe(2);
    const ws = new WebSocket(`${fake.gatewayUrl}?v=10&encoding=json`);
    await once(ws, 'message');
    ws.send(JSON.stringify({ op: 2, d: { token: fake.token, intents: 1, properties: {}, shard: [2, 2] } }));
    const [code] = (await once(ws, 'close')) as [number];
    expect(code).toBe(4010);
  });

  it('one client per shard: each sees only its guild, and a message reaches only its shard', async () => {
    const [zero, one] = await Promise.all([
      loginClient(fake, { shards: [0], shardCount: 2 }),
      loginClient(fake, { shards: [1], shardCount: 2 }),
    ]);
    clients.push(zero, one);
    expect([...zero.guilds.cache.keys()]).toEqual([guilds[0].id]);
    expect([...one.guilds.cache.keys()]).toEqual([guilds[1].id]);
    expect(fake.gateway.readyShards()).toEqual([0, 1]);

    const seen: Array<[number, string]> = [];
    zero.on('messageCreate', (m: Message) => seen.push([0, m.content]));
    one.on('messageCreate', (m: Message) => seen.push([1, m.content]));
    const general = (g: FakeGuild) => g.channels.find((c) => c.name === 'general')!.id;
    await fake.sendMessage({ channelId: general(guilds[1]), author: alice, content: 'to shard one' });
    await fake.sendMessage({ channelId: general(guilds[0]), author: alice, content: 'to shard zero' });
    await expect.poll(() => seen.length).toBe(2);
    expect(seen.sort()).toEqual([
      [0, 'to shard zero'],
      [1, 'to shard one'],
    ]);
  });

  it('a voice join is answered on the shard that owns the guild (op 4)', async () => {
    const one = clients[1]!;
    const voiceChannel = guilds[1].channels.find((c) => c.type === 2)!.id;
    const stateUpdate = once(one, 'voiceStateUpdate');
    one.guilds.cache
      .get(guilds[1].id)!
      .shard.send({ op: 4, d: { guild_id: guilds[1].id, channel_id: voiceChannel, self_mute: false, self_deaf: true } });
    const [, now] = (await stateUpdate) as [unknown, { channelId: string | null; id: string }];
    expect(now).toMatchObject({ channelId: voiceChannel, id: DEFAULT_IDS.bot });
    // The other shard's session asking for a guild it does not own is ignored, as on Discord.
    // Proved by a later op 4 on the same socket for the guild it does own: the server reads one
    // socket's payloads in order, so once that one is recorded the first was read and dropped.
    const before = fake.botVoiceStates.length;
    const zeroShard = clients[0]!.ws.shards.get(0)!;
    const later = fake.waitForBotVoiceState((s) => s.guildId === guilds[0].id);
    zeroShard.send({ op: 4, d: { guild_id: guilds[1].id, channel_id: null, self_mute: false, self_deaf: false } });
    zeroShard.send({ op: 4, d: { guild_id: guilds[0].id, channel_id: null, self_mute: false, self_deaf: false } });
    await later;
    expect(fake.botVoiceStates.slice(before).map((s) => s.guildId)).toEqual([guilds[0].id]);
  });
});
