/**
 * Several bot applications on one local Discord: each logs in with its own token, answers REST as
 * itself, hears only the guilds it is in, has its own voice call per guild, and joins or leaves
 * guilds as Discord's bot authorization makes it. Two real discord.js clients, one process.
 */
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { createAudioPlayer, createAudioResource, entersState, joinVoiceChannel, StreamType, VoiceConnectionStatus } from '@discordjs/voice';
import { GatewayIntentBits, Status, type Client, type GatewayDispatchPayload } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_IDS, defaultGuild, guildOnShard, PERMISSIONS, startFakeDiscord, type FakeDiscord } from '../src/server.ts';
import { startFakeVoiceServer, trustCertificate, type FakeVoiceServer } from '../src/voice/server.ts';
import { BOT_INTENTS, loginClient } from './helpers.ts';
import { makeSineFiles } from './voice/helpers.ts';

const EXTRA = { id: '1200000000000000002', username: 'yomiage-2' };
const VOICE_2 = '1100000000000000104';
const home = defaultGuild();
home.channels.push({ id: VOICE_2, name: 'Voice 2', type: 2, position: 1 });
const away = guildOnShard(0, 1, 1);

let fake: FakeDiscord;
let voice: FakeVoiceServer;
let main: Client<true>;
let extra: Client<true>;
let dir: string;
const seen = new Map<string, GatewayDispatchPayload[]>();

function record(client: Client<true>): void {
  const list: GatewayDispatchPayload[] = [];
  seen.set(client.user.id, list);
  client.on('raw', (packet: GatewayDispatchPayload) => list.push(packet));
}

const extraToken = () => fake.bots[1]!.token;
const rest = (path: string, token: string) => fetch(`${fake.apiUrl}/v10${path}`, { headers: { authorization: `Bot ${token}` } });

beforeAll(async () => {
  dir = await mkdtemp(joinPath(tmpdir(), 'several-bots-'));
  voice = await startFakeVoiceServer();
  trustCertificate(voice.caCertPem);
  fake = await startFakeDiscord({ guilds: [home, away], voiceServer: voice, extraBots: [{ user: EXTRA, guildIds: [home.id] }] });
  const intents = [...BOT_INTENTS, GatewayIntentBits.DirectMessages];
  main = await loginClient(fake, { intents });
  extra = await loginClient(fake, { intents }, extraToken());
  record(main);
  record(extra);
});

afterAll(async () => {
  await Promise.all([main?.destroy(), extra?.destroy()]);
  await fake?.close();
  await voice?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('several bot applications', () => {
  it('each token answers REST as its own bot and its gateway session hears only the guilds that bot is in', async () => {
    expect(extra.user.id).toBe(EXTRA.id);
    expect(extra.application.id).toBe(EXTRA.id);
    const me = (await (await rest('/users/@me', extraToken())).json()) as { id: string; bot: boolean };
    expect(me).toMatchObject({ id: EXTRA.id, bot: true });
    const app = (await (await rest('/applications/@me', extraToken())).json()) as { id: string; bot: { id: string } };
    expect(app).toMatchObject({ id: EXTRA.id, bot: { id: EXTRA.id } });
    expect(((await (await rest('/users/@me', fake.token)).json()) as { id: string }).id).toBe(DEFAULT_IDS.bot);

    expect([...main.guilds.cache.keys()].sort()).toEqual([home.id, away.id].sort());
    expect([...extra.guilds.cache.keys()]).toEqual([home.id]);
    const member = extra.guilds.cache.get(home.id)!.members.me!;
    expect(member.permissions.has('Connect') && member.permissions.has('ManageMessages')).toBe(true);
    const listed = (await (await rest('/users/@me/guilds', extraToken())).json()) as Array<{ id: string; permissions: string }>;
    expect(listed.map((g) => g.id)).toEqual([home.id]);
    expect(listed[0]!.permissions).toBe(member.permissions.bitfield.toString());
    const outside = await rest(`/guilds/${away.id}/members/@me`, extraToken());
    expect(outside.status).toBe(404);
    expect(await outside.json()).toMatchObject({ code: 10004 });
    expect(fake.identifies.map((i) => i.botId)).toEqual([undefined, EXTRA.id]);
    await fake.waitForReady(1000, EXTRA.id);
    await expect(fake.waitForReady(50, '999')).rejects.toThrow(/bot 999/);
  });

  it('each bot has its own DM channel with a member, and hears only the replies in its own', async () => {
    const open = async (token: string) => {
      const res = await fetch(`${fake.apiUrl}/v10/users/@me/channels`, {
        method: 'POST',
        headers: { authorization: `Bot ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ recipient_id: DEFAULT_IDS.alice }),
      });
      return ((await res.json()) as { id: string }).id;
    };
    const [mainDm, extraDm, extraAgain] = [await open(fake.token), await open(extraToken()), await open(extraToken())];
    expect(extraDm).not.toBe(mainDm);
    expect(extraAgain).toBe(extraDm);
    await fake.sendMessage({ channelId: extraDm, author: { id: DEFAULT_IDS.alice, username: 'alice' }, content: 'to the second bot' });
    const heard = (id: string) =>
      seen.get(id)!.some((p) => p.t === 'MESSAGE_CREATE' && (p.d as { channel_id: string }).channel_id === extraDm);
    await expect.poll(() => heard(EXTRA.id)).toBe(true);
    expect(heard(DEFAULT_IDS.bot)).toBe(false);
  });

  it('a member slash command goes to the main application only', async () => {
    const interaction = await fake.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: { id: DEFAULT_IDS.alice, username: 'alice' },
      name: 'ping',
    });
    await expect.poll(() => seen.get(DEFAULT_IDS.bot)!.some((p) => p.t === 'INTERACTION_CREATE')).toBe(true);
    expect(seen.get(EXTRA.id)!.some((p) => p.t === 'INTERACTION_CREATE')).toBe(false);
    expect(interaction.id).toBeTruthy();
  });

  it('two bots in two voice channels of one guild are two calls: each listener hears only its own channel', async () => {
    const { ogg } = await makeSineFiles(dir);
    voice.simulateListener({ guildId: home.id, channelId: DEFAULT_IDS.voice, userId: DEFAULT_IDS.alice });
    voice.simulateListener({ guildId: home.id, channelId: VOICE_2, userId: DEFAULT_IDS.bob });
    const connections = [
      { client: main, channelId: DEFAULT_IDS.voice },
      { client: extra, channelId: VOICE_2 },
    ].map(({ client, channelId }) =>
      joinVoiceChannel({
        guildId: home.id,
        channelId,
        group: client.user.id,
        selfDeaf: true,
        adapterCreator: client.guilds.cache.get(home.id)!.voiceAdapterCreator,
      }),
    );
    try {
      await Promise.all(connections.map((c) => entersState(c, VoiceConnectionStatus.Ready, 15_000)));
      // Each bot was told only of its own call.
      for (const id of [DEFAULT_IDS.bot, EXTRA.id]) expect(seen.get(id)!.filter((p) => p.t === 'VOICE_SERVER_UPDATE')).toHaveLength(1);
      expect(fake.voiceCredentials(home.id)?.channelId).toBe(DEFAULT_IDS.voice);
      expect(fake.voiceCredentials(home.id, EXTRA.id)?.channelId).toBe(VOICE_2);
      await voice.waitForDave(home.id);
      for (const connection of connections) {
        const player = createAudioPlayer();
        player.on('error', () => {});
        connection.subscribe(player);
        player.play(createAudioResource(createReadStream(ogg), { inputType: StreamType.OggOpus }));
      }
      const inFirst = await voice.waitForAudio({ channelId: DEFAULT_IDS.voice, minDurationMs: 500 });
      const inSecond = await voice.waitForAudio({ channelId: VOICE_2, minDurationMs: 500 });
      expect(inFirst.userId).toBe(DEFAULT_IDS.bot);
      expect(inSecond.userId).toBe(EXTRA.id);
      const audible = (u: typeof inFirst) => u.packets.filter((p) => !p.silent);
      expect(audible(inFirst).every((p) => JSON.stringify(p.heardBy) === JSON.stringify({ [DEFAULT_IDS.alice]: 'decrypted' }))).toBe(true);
      expect(audible(inSecond).every((p) => JSON.stringify(p.heardBy) === JSON.stringify({ [DEFAULT_IDS.bob]: 'decrypted' }))).toBe(true);
    } finally {
      for (const connection of connections) connection.destroy();
    }
  });

  it('a bot joins a guild through its authorize URL (Manage Server needed) and gets GUILD_DELETE when removed', async () => {
    const url = new URL('/oauth2/authorize', fake.apiUrl);
    const query = {
      client_id: EXTRA.id,
      scope: 'bot applications.commands',
      permissions: String(PERMISSIONS.Connect | PERMISSIONS.Speak),
      guild_id: away.id,
    };
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    const page = await fetch(`${url}&user=${DEFAULT_IDS.owner}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Authorize');
    expect(html).toContain(away.name);
    const submit = (user: string) =>
      fetch(new URL('/oauth2/authorize', fake.apiUrl), {
        method: 'POST',
        body: new URLSearchParams({ ...query, user, action: 'authorize' }),
      });

    // alice may not manage that server: nothing changes.
    expect((await submit(DEFAULT_IDS.alice)).status).toBe(403);
    expect(extra.guilds.cache.has(away.id)).toBe(false);

    const joined = new Promise<string>((resolve) => extra.once('guildCreate', (g) => resolve(g.id)));
    expect((await submit(DEFAULT_IDS.owner)).status).toBe(200);
    expect(await joined).toBe(away.id);
    const me = extra.guilds.cache.get(away.id)!.members.me!;
    expect(me.permissions.bitfield).toBe(PERMISSIONS.Connect | PERMISSIONS.Speak | BigInt(away.roles[0]!.permissions));
    expect((await rest(`/guilds/${away.id}`, extraToken())).status).toBe(200);
    // The bots already there see a new member (GUILD_MEMBER_ADD).
    await expect.poll(() => main.guilds.cache.get(away.id)!.members.cache.has(EXTRA.id)).toBe(true);

    const left = new Promise<string>((resolve) => extra.once('guildDelete', (g) => resolve(g.id)));
    await fake.removeBotFromGuild(EXTRA.id, away.id);
    expect(await left).toBe(away.id);
    expect(extra.guilds.cache.has(away.id)).toBe(false);
    expect((await rest(`/guilds/${away.id}`, extraToken())).status).toBe(404);
    expect(main.guilds.cache.has(away.id)).toBe(true);
    await expect.poll(() => main.guilds.cache.get(away.id)!.members.cache.has(EXTRA.id)).toBe(false);
  });

  it("a token reset in the portal: that bot's gateway closes with 4004 and its token is refused; the other bot is untouched; reinstated, it logs in", async () => {
    const token = extraToken();
    const closed = new Promise<number>((resolve) => extra.once('shardDisconnect', (event) => resolve(event.code)));
    fake.revokeToken(EXTRA.id);
    expect(await closed).toBe(4004);
    expect((await rest('/users/@me', token)).status).toBe(401);
    await expect(loginClient(fake, {}, token)).rejects.toThrow(/token/i);
    // Identify with it (discord.js asks REST first, so straight to the gateway) is refused too.
    const socket = new WebSocket(`${fake.gatewayUrl}?v=10&encoding=json`);
    socket.addEventListener('message', (m) => {
      if (JSON.parse(String(m.data)).op === 10)
        socket.send(JSON.stringify({ op: 2, d: { token, intents: 1, properties: { os: 'linux', browser: 'test', device: 'test' } } }));
    });
    expect(await new Promise((resolve) => socket.addEventListener('close', (e) => resolve(e.code)))).toBe(4004);
    expect((await rest('/users/@me', fake.token)).status).toBe(200);
    expect(main.ws.shards.first()!.status).toBe(Status.Ready);

    fake.reinstateToken(EXTRA.id);
    const again = await loginClient(fake, {}, token);
    try {
      expect(again.user.id).toBe(EXTRA.id);
      expect(again.guilds.cache.has(home.id)).toBe(true);
    } finally {
      await again.destroy();
    }
  });
});
