import { once } from 'node:events';
import { entersState, joinVoiceChannel, VoiceConnectionStatus } from '@discordjs/voice';
import type { Client, GatewayDispatchPayload, VoiceState } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_IDS, startFakeDiscord, type FakeDiscord } from '../src/server.ts';
import { loginClient } from './helpers.ts';

let fake: FakeDiscord | undefined;
let client: Client | undefined;

afterEach(async () => {
  await client?.destroy();
  client = undefined;
  await fake?.close();
  fake = undefined;
});

/** Raw dispatches the client receives, in order. */
function recordDispatches(c: Client): GatewayDispatchPayload[] {
  const seen: GatewayDispatchPayload[] = [];
  c.on('raw', (packet: GatewayDispatchPayload) => seen.push(packet));
  return seen;
}

describe('voice join (op 4)', () => {
  it('answers VOICE_STATE_UPDATE then VOICE_SERVER_UPDATE with the configured endpoint; null channel leaves', async () => {
    fake = await startFakeDiscord({ voiceEndpoint: () => '127.0.0.1:50001' });
    client = await loginClient(fake);
    const dispatches = recordDispatches(client);
    const guild = client.guilds.cache.get(DEFAULT_IDS.guild)!;
    const serverUpdate = once(client.ws, 'VOICE_SERVER_UPDATE');
    guild.shard.send({ op: 4, d: { guild_id: guild.id, channel_id: DEFAULT_IDS.voice, self_mute: false, self_deaf: true } });
    await serverUpdate;
    const voiceEvents = dispatches.filter((p) => p.t === 'VOICE_STATE_UPDATE' || p.t === 'VOICE_SERVER_UPDATE');
    expect(voiceEvents.map((p) => p.t)).toEqual(['VOICE_STATE_UPDATE', 'VOICE_SERVER_UPDATE']);
    const [stateUpdate, server] = voiceEvents as unknown as [
      { d: { user_id: string; channel_id: string; session_id: string; self_deaf: boolean } },
      { d: { endpoint: string; token: string; guild_id: string } },
    ];
    expect(stateUpdate.d).toMatchObject({ user_id: DEFAULT_IDS.bot, channel_id: DEFAULT_IDS.voice, self_deaf: true });
    expect(server.d).toMatchObject({ endpoint: '127.0.0.1:50001', guild_id: DEFAULT_IDS.guild });
    expect(fake.botVoiceStates).toEqual([{ guildId: DEFAULT_IDS.guild, channelId: DEFAULT_IDS.voice, selfMute: false, selfDeaf: true }]);
    // What the voice server should expect in its Identify.
    const credentials = fake.voiceCredentials(DEFAULT_IDS.guild);
    expect(credentials).toMatchObject({
      token: server.d.token,
      sessionId: stateUpdate.d.session_id,
      userId: DEFAULT_IDS.bot,
      endpoint: '127.0.0.1:50001',
    });
    expect(
      fake.checkVoiceIdentify({
        server_id: DEFAULT_IDS.guild,
        user_id: DEFAULT_IDS.bot,
        session_id: stateUpdate.d.session_id,
        token: server.d.token,
      }),
    ).toBe(true);
    expect(
      fake.checkVoiceIdentify({
        server_id: DEFAULT_IDS.guild,
        user_id: DEFAULT_IDS.bot,
        session_id: stateUpdate.d.session_id,
        token: 'stale',
      }),
    ).toBe(false);
    await expect.poll(() => guild.members.me?.voice.channelId).toBe(DEFAULT_IDS.voice);

    const left = once(client, 'voiceStateUpdate') as Promise<[VoiceState, VoiceState]>;
    guild.shard.send({ op: 4, d: { guild_id: guild.id, channel_id: null, self_mute: false, self_deaf: false } });
    const [, after] = await left;
    expect(after.channelId).toBeNull();
    expect(fake.voiceCredentials(DEFAULT_IDS.guild)).toBeUndefined();
    expect(dispatches.filter((p) => p.t === 'VOICE_SERVER_UPDATE')).toHaveLength(1);
  });

  it('@discordjs/voice joinVoiceChannel reaches Connecting with the fake endpoint, and destroy leaves', async () => {
    fake = await startFakeDiscord({ voiceEndpoint: () => '127.0.0.1:9', voiceToken: 'fixed-voice-token' });
    client = await loginClient(fake);
    const guild = client.guilds.cache.get(DEFAULT_IDS.guild)!;
    const connection = joinVoiceChannel({
      guildId: guild.id,
      channelId: DEFAULT_IDS.voice,
      adapterCreator: guild.voiceAdapterCreator,
      selfDeaf: true,
    });
    connection.on('error', () => {}); // nothing listens on 127.0.0.1:9; only the signalling is under test
    const left = fake.waitForBotVoiceState((s) => s.channelId === null);
    try {
      await entersState(connection, VoiceConnectionStatus.Connecting, 5_000);
      expect(fake.voiceCredentials(DEFAULT_IDS.guild)?.token).toBe('fixed-voice-token');
    } finally {
      connection.destroy();
    }
    await left;
    expect(fake.botVoiceStates.map((s) => s.channelId)).toEqual([DEFAULT_IDS.voice, null]);
  });

  it('setVoiceState dispatches a member joining and leaving; new sessions see it in GUILD_CREATE', async () => {
    fake = await startFakeDiscord();
    client = await loginClient(fake);
    const joined = once(client, 'voiceStateUpdate') as Promise<[VoiceState, VoiceState]>;
    await fake.setVoiceState(DEFAULT_IDS.alice, DEFAULT_IDS.guild, DEFAULT_IDS.voice);
    const [before, after] = await joined;
    expect(before.channelId).toBeNull();
    expect(after.channelId).toBe(DEFAULT_IDS.voice);
    expect(after.member?.user.username).toBe('alice');
    const voiceChannel = client.guilds.cache.get(DEFAULT_IDS.guild)?.channels.cache.get(DEFAULT_IDS.voice);
    expect(voiceChannel?.isVoiceBased() && voiceChannel.members.has(DEFAULT_IDS.alice)).toBe(true);

    await client.destroy();
    client = await loginClient(fake);
    const voice = client.guilds.cache.get(DEFAULT_IDS.guild)?.voiceStates.cache.get(DEFAULT_IDS.alice);
    expect(voice?.channelId).toBe(DEFAULT_IDS.voice);

    const leftEvent = once(client, 'voiceStateUpdate') as Promise<[VoiceState, VoiceState]>;
    await fake.setVoiceState(DEFAULT_IDS.alice, DEFAULT_IDS.guild, null);
    expect((await leftEvent)[1].channelId).toBeNull();
  });
});
