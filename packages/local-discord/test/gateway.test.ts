import { once } from 'node:events';
import { Client, GatewayIntentBits, type Message } from 'discord.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { DEFAULT_IDS, startFakeDiscord, type FakeDiscord } from '../src/server.ts';
import { BOT_INTENTS, loginClient } from './helpers.ts';

let fake: FakeDiscord;
let client: Client | undefined;

beforeEach(async () => {
  fake = await startFakeDiscord();
});

afterEach(async () => {
  await client?.destroy();
  client = undefined;
  await fake.close();
});

describe('login', () => {
  it('a real Client becomes ready and sees the guild, its channels and (fetched) members', async () => {
    client = await loginClient(fake);
    await fake.waitForReady();
    expect(client.user?.id).toBe(DEFAULT_IDS.bot);
    expect(client.application?.id).toBe(fake.applicationId);
    const guild = client.guilds.cache.get(DEFAULT_IDS.guild);
    expect(guild?.name).toBe('Test Guild');
    expect(guild?.available).toBe(true);
    expect(guild?.channels.cache.get(DEFAULT_IDS.general)?.name).toBe('general');
    expect(guild?.channels.cache.get(DEFAULT_IDS.chat)?.isTextBased()).toBe(true);
    expect(guild?.channels.cache.get(DEFAULT_IDS.voice)?.isVoiceBased()).toBe(true);
    expect(guild?.members.me?.id).toBe(DEFAULT_IDS.bot);
    expect(guild?.roles.everyone.id).toBe(DEFAULT_IDS.guild);
    // Without the presences intent GUILD_CREATE lists only the bot; op 8 returns everybody.
    const members = await guild!.members.fetch();
    expect([...members.values()].map((m) => m.user.username).sort()).toEqual(['alice', 'bob', 'otherbot', 'owner', 'yomiage']);
    expect(members.get(DEFAULT_IDS.bob)?.permissions.has('ManageGuild')).toBe(true);
    expect(members.get(DEFAULT_IDS.alice)?.permissions.has('ManageGuild')).toBe(false);
    expect(members.get(DEFAULT_IDS.otherbot)?.user.bot).toBe(true);
    expect(fake.identifies).toHaveLength(1);
    expect(fake.identifies[0]?.intents).toBe(BOT_INTENTS.reduce((a, b) => a | b, 0));
  });

  it('rejects a wrong token on REST (401) and on identify (close 4004)', async () => {
    const bad = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: fake.apiUrl } });
    await expect(bad.login('not-the-token')).rejects.toThrow();
    await bad.destroy();
    expect(fake.requests.some((r) => r.path === '/gateway/bot' && r.status === 401)).toBe(true);
    expect(JSON.stringify(fake.requests)).not.toContain('not-the-token');

    const gatewayUrl = fake.gatewayUrl;
    const ws = new WebSocket(`${gatewayUrl}?v=10&encoding=json`);
    const [hello] = (await once(ws, 'message')) as [Buffer];
    expect(JSON.parse(hello.toString())).toMatchObject({ op: 10, d: { heartbeat_interval: expect.any(Number) } });
    ws.send(JSON.stringify({ op: 2, d: { token: 'wrong', intents: 1, properties: {} } }));
    const [code] = (await once(ws, 'close')) as [number];
    expect(code).toBe(4004);
  });
});

describe('MESSAGE_CREATE', () => {
  it('reaches messageCreate with content, author, member, guild and channel resolved', async () => {
    client = await loginClient(fake);
    const received = once(client, 'messageCreate') as Promise<[Message]>;
    const { id } = await fake.sendMessage({
      channelId: DEFAULT_IDS.general,
      author: { id: DEFAULT_IDS.alice, username: 'alice' },
      content: 'こんにちは <@1000000000000000003>',
      member: { nick: 'ありす' },
    });
    const [message] = await received;
    expect(message.id).toBe(id);
    expect(message.content).toBe('こんにちは <@1000000000000000003>');
    expect(message.author.username).toBe('alice');
    expect(message.author.bot).toBe(false);
    expect(message.member?.displayName).toBe('ありす');
    expect(message.guild?.id).toBe(DEFAULT_IDS.guild);
    expect(message.channel.id).toBe(DEFAULT_IDS.general);
    expect(message.mentions.users.get(DEFAULT_IDS.bob)?.username).toBe('bob');
  });

  it('blanks content for a client without the MessageContent intent, unless the bot is mentioned', async () => {
    client = await loginClient(fake, { intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages] });
    const seen: string[] = [];
    client.on('messageCreate', (m) => seen.push(m.content));
    await fake.sendMessage({ channelId: DEFAULT_IDS.chat, author: { id: DEFAULT_IDS.alice, username: 'alice' }, content: 'secret' });
    await fake.sendMessage({
      channelId: DEFAULT_IDS.chat,
      author: { id: DEFAULT_IDS.alice, username: 'alice' },
      content: `<@${DEFAULT_IDS.bot}> hi`,
    });
    await expect.poll(() => seen.length).toBe(2);
    expect(seen).toEqual(['', `<@${DEFAULT_IDS.bot}> hi`]);
  });

  it('blanks content for an application without message content access, though it asks for the intent; a message command still gets its target', async () => {
    client = await loginClient(fake);
    const seen: Message[] = [];
    client.on('messageCreate', (m) => seen.push(m));
    const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
    fake.setMessageContent(false);
    const { id } = await fake.sendMessage({
      channelId: DEFAULT_IDS.chat,
      author: alice,
      content: 'secret',
      attachments: [{ filename: 'a.png', content_type: 'image/png' }],
    });
    await fake.sendMessage({ channelId: DEFAULT_IDS.chat, author: alice, content: `<@${DEFAULT_IDS.bot}> hi` });
    await expect.poll(() => seen.length).toBe(2);
    expect(fake.identifies[0]!.intents & GatewayIntentBits.MessageContent).toBe(GatewayIntentBits.MessageContent);
    expect([seen[0]!.content, seen[0]!.attachments.size, seen[1]!.content]).toEqual(['', 0, `<@${DEFAULT_IDS.bot}> hi`]);
    // Apps on the message's menu: Discord sends the target with its text whatever the intent.
    const used = once(client, 'interactionCreate') as Promise<[import('discord.js').Interaction]>;
    await fake.sendInteraction({ channelId: DEFAULT_IDS.chat, user: alice, name: 'Check', target: { messageId: id } });
    const [interaction] = await used;
    expect(interaction.isMessageContextMenuCommand() && interaction.targetMessage.content).toBe('secret');
    fake.setMessageContent(true);
    await fake.sendMessage({ channelId: DEFAULT_IDS.chat, author: alice, content: 'visible again' });
    await expect.poll(() => seen.length).toBe(3);
    expect(seen[2]!.content).toBe('visible again');
  });

  it("dispatches the bot's own channel messages back to it, like Discord", async () => {
    client = await loginClient(fake);
    const received = once(client, 'messageCreate') as Promise<[Message]>;
    const channel = client.channels.cache.get(DEFAULT_IDS.general);
    if (!channel?.isSendable()) throw new Error('general is not sendable');
    await channel.send('読み上げを開始します');
    const [echo] = await received;
    expect(echo.author.id).toBe(DEFAULT_IDS.bot);
    expect(echo.content).toBe('読み上げを開始します');
  });
});

describe('resilience', () => {
  it('a dropped connection resumes and replays events dispatched while away', async () => {
    client = await loginClient(fake);
    const resumed = once(client, 'shardResume');
    fake.closeGateway(4000);
    const received = once(client, 'messageCreate') as Promise<[Message]>;
    await fake.sendMessage({ channelId: DEFAULT_IDS.general, author: { id: DEFAULT_IDS.alice, username: 'alice' }, content: 'while away' });
    await resumed;
    const [message] = await received;
    expect(message.content).toBe('while away');
    expect(fake.identifies).toHaveLength(1);
    expect(fake.gateway.received.some((p) => p.op === 6)).toBe(true);
  });

  it('op 9 Invalid Session (not resumable) makes the client identify again', async () => {
    // discord.js spaces identifies 5 s apart; a no-wait throttler (a real client option) keeps this fast.
    client = await loginClient(fake, { ws: { buildIdentifyThrottler: async () => ({ waitForIdentify: async () => {} }) } });
    fake.invalidateSession(false);
    await expect.poll(() => fake.identifies.length, { interval: 50 }).toBe(2);
    await fake.waitForReady();
    const received = once(client, 'messageCreate') as Promise<[Message]>;
    await fake.sendMessage({
      channelId: DEFAULT_IDS.general,
      author: { id: DEFAULT_IDS.alice, username: 'alice' },
      content: 'after re-identify',
    });
    expect((await received)[0].content).toBe('after re-identify');
  });
});
