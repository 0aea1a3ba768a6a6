import { once } from 'node:events';
import { entersState, joinVoiceChannel, VoiceConnectionStatus, type VoiceConnection } from '@discordjs/voice';
import { PermissionFlagsBits, type Client, type GatewayDispatchPayload } from 'discord.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_IDS, startFakeDiscord, type FakeDiscord } from '../src/server.ts';
import { startFakeVoiceServer, trustCertificate, type FakeVoiceServer } from '../src/voice/server.ts';
import { loginClient } from './helpers.ts';

// What Discord does to a bot's voice that it did not ask for, as the local Discord plays it for the
// real discord.js and @discordjs/voice: a moderator disconnects it, its channel is deleted, its
// Connect permission is taken away, its calls are moved to another voice server.
const guildId = DEFAULT_IDS.guild;

let voice: FakeVoiceServer;
let otherVoice: FakeVoiceServer;
let fake: FakeDiscord | undefined;
let client: Client | undefined;
let connection: VoiceConnection | undefined;

beforeAll(async () => {
  [voice, otherVoice] = await Promise.all([startFakeVoiceServer(), startFakeVoiceServer()]);
  trustCertificate(voice.caCertPem);
  trustCertificate(otherVoice.caCertPem);
});
afterEach(async () => {
  if (connection?.state.status !== VoiceConnectionStatus.Destroyed) connection?.destroy();
  connection = undefined;
  await client?.destroy();
  client = undefined;
  await fake?.close();
  fake = undefined;
});
afterAll(async () => {
  await Promise.all([voice?.close(), otherVoice?.close()]);
});

/** The bot in #Voice through @discordjs/voice, Ready on `voice`; raw dispatches recorded from then on. */
async function botInVoice(): Promise<{
  guild: NonNullable<ReturnType<Client['guilds']['cache']['get']>>;
  dispatches: GatewayDispatchPayload[];
}> {
  fake = await startFakeDiscord({ voiceServer: voice });
  client = await loginClient(fake);
  const guild = client.guilds.cache.get(guildId)!;
  connection = joinVoiceChannel({ guildId, channelId: DEFAULT_IDS.voice, adapterCreator: guild.voiceAdapterCreator, selfDeaf: true });
  connection.on('error', () => {});
  await entersState(connection, VoiceConnectionStatus.Ready, 20_000);
  const dispatches: GatewayDispatchPayload[] = [];
  client.on('raw', (packet: GatewayDispatchPayload) => dispatches.push(packet));
  return { guild, dispatches };
}

describe('voice the bot did not ask to change', () => {
  it('a moderator disconnects the bot: its voice state goes to no channel, its voice websocket is closed with 4014, and its credentials end', async () => {
    const { guild } = await botInVoice();
    const closed = voice.waitForEvent('close', (s) => s?.userId === DEFAULT_IDS.bot && s.serverId === guildId);
    const left = once(client!, 'voiceStateUpdate');
    await fake!.disconnectMember(guildId, DEFAULT_IDS.bot);
    await left;
    expect(guild.members.me?.voice.channelId).toBeNull();
    const [, info] = await closed;
    expect(info).toEqual({ code: 4014, byServer: true });
    await entersState(connection!, VoiceConnectionStatus.Disconnected, 5_000);
    expect(connection!.state).toMatchObject({ closeCode: 4014 });
    expect(fake!.voiceCredentials(guildId)).toBeUndefined();
    expect(fake!.guilds[0]!.voiceStates.some((v) => v.userId === DEFAULT_IDS.bot)).toBe(false);
  });

  it('a moderator deletes the voice channel: CHANNEL_DELETE, then everyone in it (the bot too) is disconnected, the bot with 4014', async () => {
    const { dispatches } = await botInVoice();
    await fake!.setVoiceState(DEFAULT_IDS.alice, guildId, DEFAULT_IDS.voice);
    const closed = voice.waitForEvent('close', (s) => s?.userId === DEFAULT_IDS.bot);
    await fake!.deleteChannel(DEFAULT_IDS.voice);
    expect((await closed)[1]).toEqual({ code: 4014, byServer: true });
    await expect.poll(() => dispatches.filter((p) => p.t === 'VOICE_STATE_UPDATE' && p.d.channel_id === null).length).toBe(2);
    const events = dispatches.filter((p) => p.t === 'CHANNEL_DELETE' || (p.t === 'VOICE_STATE_UPDATE' && p.d.channel_id === null));
    expect(events.map((p) => (p.t === 'VOICE_STATE_UPDATE' ? `left:${p.d.user_id}` : p.t)).sort()).toEqual(
      ['CHANNEL_DELETE', `left:${DEFAULT_IDS.alice}`, `left:${DEFAULT_IDS.bot}`].sort(),
    );
    expect(events[0]!.t).toBe('CHANNEL_DELETE');
    expect(fake!.guilds[0]!.voiceStates).toEqual([]);
  });

  it("a moderator takes the bot's Connect away: CHANNEL_UPDATE carries the overwrite, the bot stays connected, and a new join there is left unanswered", async () => {
    const { guild, dispatches } = await botInVoice();
    const updated = once(client!, 'channelUpdate');
    await fake!.setChannelOverwrites(DEFAULT_IDS.voice, [
      { id: DEFAULT_IDS.botRole, type: 0, allow: '0', deny: String(PermissionFlagsBits.Connect) },
    ]);
    await updated;
    const channel = guild.channels.cache.get(DEFAULT_IDS.voice)!;
    expect(channel.permissionsFor(guild.members.me!).has(PermissionFlagsBits.Connect)).toBe(false);
    // Still in the call: Discord does not move anyone out for it.
    expect(connection!.state.status).toBe(VoiceConnectionStatus.Ready);
    // Once out, it cannot come back: a join is met with silence.
    connection!.destroy();
    await expect.poll(() => fake!.voiceCredentials(guildId)).toBeUndefined();
    const servers = () => dispatches.filter((p) => p.t === 'VOICE_SERVER_UPDATE');
    guild.shard.send({ op: 4, d: { guild_id: guildId, channel_id: DEFAULT_IDS.voice, self_mute: false, self_deaf: true } });
    await expect.poll(() => fake!.botVoiceStates.length).toBe(3);
    // A later dispatch on the same gateway connection arrives after any answer to the join would have.
    const later = once(client!, 'voiceStateUpdate');
    await fake!.setVoiceState(DEFAULT_IDS.alice, guildId, DEFAULT_IDS.voice);
    await later;
    expect(servers()).toEqual([]);
  });

  it("Discord moves the guild's calls to another voice server: the bot gets the new endpoint with a fresh token, connects there, and later joins go there too", async () => {
    const { dispatches } = await botInVoice();
    const before = fake!.voiceCredentials(guildId)!;
    const identified = otherVoice.waitForEvent('identify', (s) => s.serverId === guildId && s.userId === DEFAULT_IDS.bot);
    expect(await fake!.moveVoiceServer(guildId, otherVoice)).toBe(1);
    const [session] = await identified;
    await entersState(connection!, VoiceConnectionStatus.Ready, 20_000);
    const moved = dispatches.filter((p) => p.t === 'VOICE_SERVER_UPDATE').map((p) => p.d as { endpoint: string; token: string });
    expect(moved).toHaveLength(1);
    expect(moved[0]!.endpoint).toBe(otherVoice.endpoint);
    expect(moved[0]!.token).not.toBe(before.token);
    // The new server was told which channel this call is in, and the credentials follow.
    expect(session.channelId).toBe(DEFAULT_IDS.voice);
    expect(fake!.voiceCredentials(guildId)).toMatchObject({ endpoint: otherVoice.endpoint, token: moved[0]!.token });
    connection!.destroy();
    await expect.poll(() => fake!.voiceCredentials(guildId)).toBeUndefined();
    const guild = client!.guilds.cache.get(guildId)!;
    connection = joinVoiceChannel({ guildId, channelId: DEFAULT_IDS.voice, adapterCreator: guild.voiceAdapterCreator, selfDeaf: true });
    connection.on('error', () => {});
    await entersState(connection, VoiceConnectionStatus.Ready, 20_000);
    expect(fake!.voiceCredentials(guildId)?.endpoint).toBe(otherVoice.endpoint);
  });
});
