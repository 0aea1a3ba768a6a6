/**
 * The playground page's server: what members do through it reaches the local Discord, every change
 * is pushed to the page, bad input gets a clear refusal, and only this page can drive it (Host and
 * Origin checked, so another site open in the browser cannot). The bot's side is a discord.js
 * client logged into the local Discord that answers /ping (the playground's own test starts the
 * real bot: browser/playground.test.ts next to this file).
 */
import { EventEmitter } from 'node:events';
import { AttachmentBuilder, MessageFlags, type Client } from 'discord.js';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { startFakeDiscord, startFakeVoiceServer, type FakeDiscord, type FakeVoiceServer } from '@yomiage/local-discord';
import type { BotLogLine, BotProcessEvents } from '../src/bot-process.ts';
import { PageServer } from '../src/page-server.ts';
import { VoiceTap } from '../src/voice-tap.ts';
import { playgroundGuild, PLAYGROUND_IDS as IDS } from '../src/world.ts';
import { loginClient } from '@yomiage/local-discord/test/helpers';

let discord: FakeDiscord;
let voice: FakeVoiceServer;
let emulator: Emulator;
let tap: VoiceTap;
let page: PageServer;
let origin: string;
let client: Client<true>;
/** The MP3 the client attaches to its answer to /ping. */
const MP3 = Buffer.from([0xff, 0xf3, 0x44, 0xc4, 1, 2, 3, 4]);

/** The bot child as the page server sees it: a status and a log. */
const bot = Object.assign(new EventEmitter<BotProcessEvents>(), { status: 'ready' as const, logs: [] as BotLogLine[] });

beforeAll(async () => {
  voice = await startFakeVoiceServer();
  discord = await startFakeDiscord({ guilds: [playgroundGuild()], voiceEndpoint: () => voice.endpoint });
  emulator = await startEmulator();
  tap = new VoiceTap(voice, { guildId: IDS.guild });
  page = new PageServer({ port: 0, guildId: IDS.guild, discord, voice, emulator, bot, tap });
  await page.listen();
  origin = page.url.replace(/\/$/, '');
  // Registered as deploy-commands does: one bulk overwrite for the guild.
  const res = await fetch(`${discord.apiUrl}/v10/applications/${discord.applicationId}/guilds/${IDS.guild}/commands`, {
    method: 'PUT',
    headers: { authorization: `Bot ${discord.token}`, 'content-type': 'application/json' },
    body: JSON.stringify([
      { name: 'ping', description: 'Ping', options: [{ type: 3, name: 'text', description: 'Text' }] },
      // A message command (Apps > Fix on a message): it answers with a modal, as Fix reading does.
      { name: 'Fix', type: 3 },
    ]),
  });
  expect(res.status).toBe(200);
  client = await loginClient(discord);
  client.on('interactionCreate', async (interaction) => {
    // Apps > Fix: a modal with one field named after the message's first word; its submit is answered privately.
    if (interaction.isMessageContextMenuCommand()) {
      const word = interaction.targetMessage.content.split(' ')[0]!;
      return void (await interaction.showModal({
        custom_id: 'fix',
        title: 'Fix',
        components: [{ type: 1, components: [{ type: 4, custom_id: `w:${word}`, label: word, style: 1, required: false }] }],
      }));
    }
    if (interaction.isModalSubmit()) {
      const [field] = interaction.fields.fields.values();
      return void (await interaction.reply({
        content: `fixed ${field!.customId.slice(2)} as ${interaction.fields.getTextInputValue(field!.customId)}`,
        flags: MessageFlags.Ephemeral,
      }));
    }
    // A click on /ping ask's Reply button: a new message; on its OK button: the message says who clicked.
    if (interaction.isButton() && interaction.customId === 'reply')
      return void (await interaction.reply({ content: 'a reply to the click' }));
    if (interaction.isButton())
      return void (await interaction.update({ content: `clicked by ${interaction.user.username}`, components: [] }));
    // /ping ask: a question with a button.
    if (interaction.isChatInputCommand() && interaction.options.getString('text') === 'ask') {
      return void (await interaction.reply({
        content: 'sure?',
        components: [
          {
            type: 1,
            components: [
              { type: 2, style: 1, custom_id: 'ok', label: 'OK' },
              { type: 2, style: 2, custom_id: 'reply', label: 'Reply' },
            ],
          },
        ],
      }));
    }
    // /ping with a text: an ephemeral reply with an MP3; without: no answer at all.
    if (!interaction.isChatInputCommand() || !interaction.options.getString('text')) return;
    await interaction.reply({
      content: 'here it is',
      flags: MessageFlags.Ephemeral,
      files: [new AttachmentBuilder(MP3, { name: 'say.mp3' })],
    });
  });
});
afterAll(async () => {
  await client?.destroy();
  await page?.close();
  tap?.close();
  await Promise.all([discord?.close(), voice?.close(), emulator?.close()]);
});

/** One request with any headers (fetch will not set Host). */
function http(
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: unknown } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string; body: Buffer }> {
  const url = new URL(path, page.url);
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = {
    host: url.host,
    ...(body ? { origin, 'content-type': 'application/json' } : {}),
    ...options.headers,
  };
  return new Promise((resolve, reject) => {
    const req = request({ method, hostname: url.hostname, port: url.port, path: url.pathname + url.search, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const all = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: all.toString('utf8'), body: all });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A page's live socket; `next(t)` is the next message of type `t`. */
async function live(wsOrigin = origin) {
  const ws = new WebSocket(`${origin.replace('http', 'ws')}/api/live`, { origin: wsOrigin });
  const messages: Array<{ t: string } & Record<string, any>> = [];
  const waiters: Array<() => void> = [];
  ws.on('message', (data, binary) => {
    if (binary) return;
    messages.push(JSON.parse(String(data)));
    for (const wake of waiters.splice(0)) wake();
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`refused with ${res.statusCode}`)));
  });
  let read = 0;
  const next = async (t: string, predicate: (m: any) => boolean = () => true): Promise<any> => {
    for (;;) {
      const found = messages.slice(read).find((m) => m.t === t && predicate(m));
      if (found) {
        read = messages.indexOf(found) + 1;
        return found;
      }
      await new Promise<void>((resolve, reject) => {
        waiters.push(resolve);
        setTimeout(
          () =>
            reject(
              new Error(
                `no ${t} message; got ${messages
                  .slice(read)
                  .map((m) => m.t)
                  .join(', ')}`,
              ),
            ),
          5000,
        );
      });
    }
  };
  return { ws, next };
}

describe('only this page drives it', () => {
  it('GIVEN a Host that is not 127.0.0.1 or localhost at its port (DNS rebinding) THEN 403, even for the page', async () => {
    expect((await http('GET', '/')).status).toBe(200);
    expect((await http('GET', '/', { headers: { host: `localhost:${new URL(page.url).port}` } })).status).toBe(200);
    const rebound = await http('GET', '/api/state', { headers: { host: `attacker.example:${new URL(page.url).port}` } });
    expect(rebound.status).toBe(403);
    expect(rebound.text).not.toContain(IDS.guild);
  });

  it('GIVEN a POST from another origin, or without one THEN 403 and nothing is sent', async () => {
    const before = discord.requests.length;
    for (const headers of [{ origin: 'http://attacker.example' }, { origin: '' }]) {
      const res = await http('POST', '/api/message', { headers, body: { userId: IDS.alice, channelId: IDS.text, content: 'forged' } });
      expect(res.status).toBe(403);
    }
    const state = JSON.parse((await http('GET', '/api/state')).text);
    expect(state.timeline.some((i: { content?: string }) => i.content === 'forged')).toBe(false);
    expect(discord.requests.length).toBe(before);
  });

  it('GIVEN a form post (not JSON) THEN 415: a cross-site form cannot send it', async () => {
    const res = await http('POST', '/api/message', {
      headers: { 'content-type': 'text/plain' },
      body: { userId: IDS.alice, channelId: IDS.text, content: 'x' },
    });
    expect(res.status).toBe(415);
  });

  it('GIVEN a WebSocket from another origin THEN it is refused; from the page THEN it gets the snapshot', async () => {
    await expect(live('http://attacker.example')).rejects.toThrow(/403/);
    const { ws, next } = await live();
    const hello = await next('hello');
    expect(hello.state.guild.members.map((m: { displayName: string; admin: boolean }) => [m.displayName, m.admin])).toEqual([
      ['yomiage', false],
      ['はるか', true],
      ['Alice', false],
      ['タロー', false],
    ]);
    expect(hello.state.commands.map((c: { name: string }) => c.name)).toEqual(['ping', 'Fix']);
    ws.close();
  });
});

describe('what members do', () => {
  it('GIVEN bad input THEN a clear refusal naming what is wrong', async () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ['/api/message', { userId: '1', channelId: IDS.text, content: 'x' }, /no member 1/],
      ['/api/message', { userId: '1200000000000000001', channelId: IDS.text, content: 'x' }, /no member/], // the bot is no member to act as
      ['/api/message', { userId: IDS.alice, channelId: IDS.voice, content: 'x' }, /no text channel/],
      ['/api/message', { userId: IDS.alice, channelId: IDS.text, content: '   ' }, /write something/],
      ['/api/message', { userId: IDS.alice, channelId: IDS.text, content: 'あ'.repeat(2001) }, /at most 2000 characters/],
      ['/api/command', { userId: IDS.alice, channelId: IDS.text, name: 'nope' }, /no command \/nope/],
      // A message command is run from a message's Apps menu, never as a slash command (and the other way round).
      [
        '/api/command',
        { userId: IDS.alice, channelId: IDS.text, name: 'Fix' },
        /Fix is a message command: run it from a message's Apps menu/,
      ],
      ['/api/message-command', { userId: IDS.alice, channelId: IDS.text, name: 'ping', messageId: '1' }, /\/ping is not a message command/],
      ['/api/message-command', { userId: IDS.alice, channelId: IDS.text, name: 'Fix', messageId: '1' }, /no message 1 in this channel/],
      ['/api/modal', { userId: IDS.alice, interactionId: '1', values: {} }, /no such modal/],
      ['/api/voice', { userId: IDS.alice, channelId: IDS.text }, /no voice channel/],
    ];
    for (const [path, body, message] of cases) {
      const res = await http('POST', path, { body });
      expect(res.status, path).toBe(400);
      expect(JSON.parse(res.text).error).toMatch(message);
    }
    expect((await http('POST', '/api/message', { body: [1, 2] })).status).toBe(400);
  });

  it('GIVEN a message, a command, and the bot answering THEN each reaches the local Discord and the page, the ephemeral reply marked', async () => {
    const { ws, next } = await live();
    await next('hello');
    const sent = await http('POST', '/api/message', {
      body: { userId: IDS.taro, channelId: IDS.text, content: 'こんにちは <@1000000000000000102>' },
    });
    expect(sent.status).toBe(200);
    const item = (await next('item', (m) => m.item.type === 'member')).item;
    expect(item).toMatchObject({ authorId: IDS.taro, content: 'こんにちは <@1000000000000000102>', channelId: IDS.text });

    const ran = JSON.parse(
      (
        await http('POST', '/api/command', {
          body: {
            userId: IDS.alice,
            channelId: IDS.text,
            name: 'ping',
            locale: 'en-US',
            options: [{ name: 'text', type: 3, value: 'hi' }],
          },
        })
      ).text,
    );
    const command = (await next('item', (m) => m.item.type === 'command')).item;
    expect(command).toMatchObject({ id: ran.id, userId: IDS.alice, summary: '/ping text: hi', locale: 'en-US', noResponse: false });
    const reply = (await next('item', (m) => m.item.type === 'bot' && m.item.attachments.length > 0)).item;
    expect(reply).toMatchObject({
      ephemeral: true,
      interaction: { id: ran.id, kind: 'slash', name: 'ping', userId: IDS.alice },
      content: 'here it is',
    });
    // Once answered, the reply stands for the command: the command's own item says so (shown once, as Discord does).
    expect((await next('item', (m) => m.item.id === ran.id && m.item.replied)).item.noResponse).toBe(false);
    const file = await http('GET', `${reply.attachments[0].url}?download=1`);
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toBe('audio/mpeg');
    expect(file.headers['content-disposition']).toBe("attachment; filename*=UTF-8''say.mp3");
    expect(file.body.equals(MP3)).toBe(true);
    ws.close();
  });

  it('GIVEN a bot message with a button THEN the page shows it and a click reaches the bot as that member', async () => {
    const { ws, next } = await live();
    await next('hello');
    await http('POST', '/api/command', {
      body: { userId: IDS.alice, channelId: IDS.text, name: 'ping', locale: 'en-US', options: [{ name: 'text', type: 3, value: 'ask' }] },
    });
    const asked = (await next('item', (m) => m.item.type === 'bot' && m.item.buttons.length > 0)).item;
    // Each with Discord's style: blurple OK, grey Reply.
    expect(asked.buttons).toEqual([
      { customId: 'ok', label: 'OK', style: 1 },
      { customId: 'reply', label: 'Reply', style: 2 },
    ]);
    // A reply to a click is a reply to the message that had the button (not a command named "button").
    expect((await http('POST', '/api/click', { body: { userId: IDS.alice, messageId: asked.id, customId: 'reply' } })).status).toBe(200);
    const answer = (await next('item', (m) => m.item.type === 'bot' && m.item.content === 'a reply to the click')).item;
    expect(answer.interaction).toMatchObject({ kind: 'button', userId: IDS.alice, messageId: asked.id });
    const wrong = await http('POST', '/api/click', { body: { userId: IDS.alice, messageId: asked.id, customId: 'nope' } });
    expect([wrong.status, JSON.parse(wrong.text).error]).toEqual([400, 'no such button']);
    expect((await http('POST', '/api/click', { body: { userId: IDS.taro, messageId: asked.id, customId: 'ok' } })).status).toBe(200);
    const clicked = (await next('item', (m) => m.item.id === asked.id && m.item.buttons.length === 0)).item;
    expect(clicked.content).toBe('clicked by taro');
    ws.close();
  });

  it("GIVEN Apps > Fix on a member's message THEN the page gets the bot's modal, and its submit is answered under that command", async () => {
    const { ws, next } = await live();
    await next('hello');
    const written = JSON.parse(
      (await http('POST', '/api/message', { body: { userId: IDS.taro, channelId: IDS.text, content: 'GPU が速い' } })).text,
    );
    const ran = await http('POST', '/api/message-command', {
      body: { userId: IDS.alice, channelId: IDS.text, name: 'Fix', messageId: written.id, locale: 'ja' },
    });
    const opened = JSON.parse(ran.text);
    expect(opened.modal).toMatchObject({ title: 'Fix', components: [{ components: [{ custom_id: 'w:GPU', label: 'GPU' }] }] });
    // The command gave way to its modal: no item left saying Alice used it.
    expect((await next('item', (m) => m.item.id === opened.id)).item).toMatchObject({ kind: 'message', name: 'Fix' });
    expect((await next('item', (m) => m.item.id === opened.id && m.item.replied)).item.noResponse).toBe(false);
    // Only the member the modal opened for can submit it.
    const stranger = await http('POST', '/api/modal', { body: { userId: IDS.taro, interactionId: opened.id, values: { 'w:GPU': 'x' } } });
    expect([stranger.status, JSON.parse(stranger.text).error]).toEqual([400, 'no such modal']);
    const submitted = await http('POST', '/api/modal', {
      body: { userId: IDS.alice, interactionId: opened.id, values: { 'w:GPU': 'じーぴーゆー' }, locale: 'ja' },
    });
    expect(JSON.parse(submitted.text)).toMatchObject({ answered: true });
    const reply = (await next('item', (m) => m.item.type === 'bot' && m.item.content.startsWith('fixed'))).item;
    expect(reply).toMatchObject({
      content: 'fixed GPU as じーぴーゆー',
      ephemeral: true,
      interaction: { id: opened.id, kind: 'message', name: 'Fix', userId: IDS.alice },
    });
    ws.close();
  });

  it('GIVEN a command the bot never answers THEN the page says so after 3 s, as Discord does', async () => {
    const { ws, next } = await live();
    await next('hello');
    await http('POST', '/api/command', { body: { userId: IDS.alice, channelId: IDS.text, name: 'ping' } });
    const late = (await next('item', (m) => m.item.type === 'command' && m.item.noResponse)).item;
    expect(late.summary).toBe('/ping');
    ws.close();
  });

  it('GIVEN a member joins voice THEN the local Discord has them in the channel with a DAVE client; leaving takes both away', async () => {
    const { ws, next } = await live();
    await next('hello');
    expect((await http('POST', '/api/voice', { body: { userId: IDS.alice, channelId: IDS.voice } })).status).toBe(200);
    expect((await next('voice')).voiceStates).toEqual([{ userId: IDS.alice, channelId: IDS.voice }]);
    expect(voice.dave.listeners(IDS.guild).map((l) => l.userId)).toEqual([IDS.alice]);
    expect((await http('POST', '/api/voice', { body: { userId: IDS.alice, channelId: null } })).status).toBe(200);
    expect((await next('voice')).voiceStates).toEqual([]);
    expect(voice.dave.listeners(IDS.guild)).toEqual([]);
    ws.close();
  });

  it('GIVEN the bot is off the gateway THEN 503 saying so, and the message is not shown as sent', async () => {
    await client.destroy();
    await expect.poll(() => discord.gateway.sessions.size).toBe(0);
    const res = await http('POST', '/api/message', { body: { userId: IDS.alice, channelId: IDS.text, content: 'into the void' } });
    expect(res.status).toBe(503);
    expect(JSON.parse(res.text).error).toMatch(/the bot is not connected/);
    const state = JSON.parse((await http('GET', '/api/state')).text);
    expect(state.timeline.some((i: { content?: string }) => i.content === 'into the void')).toBe(false);
  });
});
