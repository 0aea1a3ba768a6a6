import { once } from 'node:events';
import {
  ApplicationCommandOptionType,
  MessageFlags,
  PermissionFlagsBits,
  Routes,
  type AutocompleteInteraction,
  type ChatInputCommandInteraction,
  type Client,
  type Interaction,
} from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_IDS, startFakeDiscord, type FakeDiscord } from '../src/server.ts';
import { loginClient } from './helpers.ts';

let fake: FakeDiscord;
let client: Client<true>;

beforeAll(async () => {
  fake = await startFakeDiscord();
  client = await loginClient(fake);
});

afterAll(async () => {
  await client?.destroy();
  await fake?.close();
});

/** Dispatches an interaction and resolves with what discord.js emitted for it. */
async function dispatch<T extends Interaction>(input: Parameters<FakeDiscord['sendInteraction']>[0]) {
  const emitted = once(client, 'interactionCreate') as Promise<[T]>;
  const handle = await fake.sendInteraction(input);
  const [interaction] = await emitted;
  return { handle, interaction };
}

describe('slash commands', () => {
  it('arrive as ChatInputCommandInteraction with options, locale and member permissions', async () => {
    const { interaction } = await dispatch<ChatInputCommandInteraction>({
      channelId: DEFAULT_IDS.general,
      user: { id: DEFAULT_IDS.bob, username: 'bob' },
      name: 'say',
      locale: 'ja',
      options: [
        { name: 'text', type: ApplicationCommandOptionType.String, value: 'おはよう' },
        { name: 'speed', type: ApplicationCommandOptionType.Number, value: 1.25 },
        { name: 'to', type: ApplicationCommandOptionType.User, value: DEFAULT_IDS.alice },
      ],
    });
    expect(interaction.isChatInputCommand()).toBe(true);
    expect(interaction.commandName).toBe('say');
    expect(interaction.options.getString('text')).toBe('おはよう');
    expect(interaction.options.getNumber('speed')).toBe(1.25);
    expect(interaction.options.getUser('to')?.username).toBe('alice');
    expect(interaction.locale).toBe('ja');
    expect(interaction.guildId).toBe(DEFAULT_IDS.guild);
    expect(interaction.channelId).toBe(DEFAULT_IDS.general);
    expect(interaction.user.id).toBe(DEFAULT_IDS.bob);
    expect(interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild)).toBe(true);

    const { interaction: fromAlice } = await dispatch<ChatInputCommandInteraction>({
      channelId: DEFAULT_IDS.general,
      user: { id: DEFAULT_IDS.alice, username: 'alice' },
      name: 'config',
      locale: 'en-US',
    });
    expect(fromAlice.memberPermissions?.has(PermissionFlagsBits.ManageGuild)).toBe(false);
    expect(fromAlice.locale).toBe('en-US');

    const { interaction: overridden } = await dispatch<ChatInputCommandInteraction>({
      channelId: DEFAULT_IDS.general,
      user: { id: DEFAULT_IDS.alice, username: 'alice' },
      name: 'config',
      memberPermissions: PermissionFlagsBits.ManageGuild.toString(),
    });
    expect(overridden.memberPermissions?.has(PermissionFlagsBits.ManageGuild)).toBe(true);
  });

  it('reply with a file arrives with the bytes intact and allowed_mentions recorded', async () => {
    const audio = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 31) % 256));
    const { handle, interaction } = await dispatch<ChatInputCommandInteraction>({
      channelId: DEFAULT_IDS.general,
      user: { id: DEFAULT_IDS.alice, username: 'alice' },
      name: 'say',
    });
    await interaction.reply({
      content: `<@${DEFAULT_IDS.bob}> 音声です`,
      files: [{ attachment: audio, name: 'a.mp3' }],
      allowedMentions: { parse: [] },
    });
    const [callback] = handle.responses();
    expect(callback).toMatchObject({ kind: 'callback', type: 4 });
    expect(callback?.data?.content).toBe(`<@${DEFAULT_IDS.bob}> 音声です`);
    expect(callback?.files).toHaveLength(1);
    expect(callback?.files[0]?.name).toBe('a.mp3');
    expect(callback?.files[0]?.data.equals(audio)).toBe(true);
    const message = handle.original();
    expect(message?.attachments[0]?.filename).toBe('a.mp3');
    expect(message?.attachments[0]?.data.equals(audio)).toBe(true);
    expect(message?.allowedMentions).toEqual({ parse: [] });
    expect(message?.pings.users).toEqual([]);
    expect(fake.messages).toContain(message);
    // The attachment URL serves the same bytes.
    const downloaded = Buffer.from(await (await fetch(message!.attachments[0]!.url)).arrayBuffer());
    expect(downloaded.equals(audio)).toBe(true);
    // A second acknowledgement is refused, as on Discord.
    await expect(interaction.reply('again')).rejects.toThrow();
    await expect(
      client.rest.post(Routes.interactionCallback(interaction.id, interaction.token), {
        body: { type: 4, data: { content: 'again' } },
        auth: false,
      }),
    ).rejects.toMatchObject({ code: 40060 });
  });

  it('deferReply + editReply + followUp are recorded in order; the edit carries the file', async () => {
    const { handle, interaction } = await dispatch<ChatInputCommandInteraction>({
      channelId: DEFAULT_IDS.chat,
      user: { id: DEFAULT_IDS.alice, username: 'alice' },
      name: 'narrate',
    });
    await interaction.deferReply({ flags: MessageFlags.Ephemeral });
    expect(handle.original()?.flags).toBe(MessageFlags.Ephemeral | MessageFlags.Loading);
    const waitForFile = handle.waitForResponse((r) => (r.message?.attachments.length ?? 0) > 0);
    await interaction.editReply({ content: '完成しました', files: [{ attachment: Buffer.from('ID3fake'), name: 'story.mp3' }] });
    const withFile = await waitForFile;
    expect(withFile.kind).toBe('editOriginal');
    expect(withFile.message?.attachments[0]?.data.toString()).toBe('ID3fake');
    await interaction.followUp({ content: '残り 1000 文字', flags: MessageFlags.Ephemeral });
    expect(handle.responses().map((r) => `${r.kind}:${r.type ?? ''}`)).toEqual(['callback:5', 'editOriginal:', 'followup:']);
    const original = handle.original();
    expect(original?.content).toBe('完成しました');
    expect(original?.flags).toBe(MessageFlags.Ephemeral); // loading cleared by the edit
    const followup = fake.messages.find((m) => m.source === 'followup' && m.interactionId === handle.id);
    expect(followup?.content).toBe('残り 1000 文字');
    // edit with `attachments: []` removes the file
    await interaction.editReply({ content: 'x', files: [], attachments: [] });
    expect(handle.original()?.attachments).toEqual([]);
  });

  it('a follow-up right after a deferral replaces the "thinking" message', async () => {
    const { handle, interaction } = await dispatch<ChatInputCommandInteraction>({
      channelId: DEFAULT_IDS.chat,
      user: { id: DEFAULT_IDS.alice, username: 'alice' },
      name: 'join',
    });
    await interaction.deferReply();
    await interaction.followUp('接続しました');
    const original = handle.original();
    expect(original?.content).toBe('接続しました');
    expect(original?.flags).toBe(0);
    expect(fake.messages.filter((m) => m.interactionId === handle.id)).toHaveLength(1);
  });

  it('autocomplete (type 4) answered with choices is recorded', async () => {
    const { handle, interaction } = await dispatch<AutocompleteInteraction>({
      channelId: DEFAULT_IDS.general,
      user: { id: DEFAULT_IDS.alice, username: 'alice' },
      name: 'voice',
      type: 4,
      options: [{ name: 'name', type: ApplicationCommandOptionType.String, value: 'ず', focused: true }],
    });
    expect(interaction.isAutocomplete()).toBe(true);
    expect(interaction.options.getFocused()).toBe('ず');
    await interaction.respond([{ name: 'ずんだもん', value: 'zundamon' }]);
    const response = await handle.waitForResponse();
    expect(response).toMatchObject({ kind: 'callback', type: 8, data: { choices: [{ name: 'ずんだもん', value: 'zundamon' }] } });
  });

  it('rejects a message over 2000 characters like Discord (50035)', async () => {
    const { interaction } = await dispatch<ChatInputCommandInteraction>({
      channelId: DEFAULT_IDS.general,
      user: { id: DEFAULT_IDS.alice, username: 'alice' },
      name: 'say',
    });
    await expect(interaction.reply('あ'.repeat(2001))).rejects.toMatchObject({ code: 50035 });
  });
});

describe('application commands', () => {
  it('rest.put(Routes.applicationCommands) is stored as a bulk overwrite, ids kept by name', async () => {
    const body = [
      { name: 'say', description: 'Read text aloud', options: [{ type: 3, name: 'text', description: 'what to say', required: true }] },
      { name: 'join', description: 'Join your voice channel', name_localizations: { ja: '参加' } },
    ];
    const stored = (await client.rest.put(Routes.applicationCommands(client.application.id), { body })) as Array<{
      id: string;
      name: string;
    }>;
    expect(fake.commands.global.map((c) => c.name)).toEqual(['say', 'join']);
    expect(stored.map((c) => c.id)).toEqual(fake.commands.global.map((c) => c.id));
    const again = (await client.rest.put(Routes.applicationCommands(client.application.id), { body: [body[0]] })) as Array<{ id: string }>;
    expect(again[0]?.id).toBe(stored[0]?.id);
    expect(fake.commands.global.map((c) => c.name)).toEqual(['say']);

    await client.rest.put(Routes.applicationGuildCommands(client.application.id, DEFAULT_IDS.guild), { body });
    expect(fake.commands.guild[DEFAULT_IDS.guild]?.map((c) => c.name)).toEqual(['say', 'join']);
    const fetched = await client.application.commands.fetch();
    expect([...fetched.values()].map((c) => c.name)).toEqual(['say']);

    // An interaction for a registered command carries its id.
    const { interaction } = await dispatch<ChatInputCommandInteraction>({
      channelId: DEFAULT_IDS.general,
      user: { id: DEFAULT_IDS.alice, username: 'alice' },
      name: 'join',
    });
    expect(interaction.commandId).toBe(fake.commands.guild[DEFAULT_IDS.guild]?.find((c) => c.name === 'join')?.id);
  });

  it('an invalid command body is refused with 50035 and nothing is stored', async () => {
    const before = fake.commands.global;
    await expect(
      client.rest.put(Routes.applicationCommands(client.application.id), { body: [{ name: 'Say', description: 'upper case' }] }),
    ).rejects.toMatchObject({ code: 50035, status: 400 });
    expect(fake.commands.global).toBe(before);
    const unknown = fake.requests.at(-1);
    expect(unknown?.headers.authorization).toBe('Bot ***');
  });
});

describe('REST', () => {
  it('unknown routes answer 404 with Discord JSON and are recorded', async () => {
    await expect(client.rest.get('/nonexistent/route' as `/${string}`)).rejects.toMatchObject({ status: 404, code: 0 });
    expect(fake.requests.at(-1)).toMatchObject({ method: 'GET', path: '/nonexistent/route', status: 404 });
  });

  it('channel messages (JSON and multipart), edits and deletes are recorded', async () => {
    const channel = await client.channels.fetch(DEFAULT_IDS.chat);
    if (!channel?.isSendable()) throw new Error('not sendable');
    const created = fake.waitForMessage((m) => m.channelId === DEFAULT_IDS.chat);
    const sent = await channel.send({ content: 'hello @everyone', allowedMentions: { parse: ['users'] } });
    expect((await created).id).toBe(sent.id);
    // Waits match only later changes: this one is satisfied by the edit below, not by the send above.
    const edited = fake.waitForMessage((m) => m.id === sent.id);
    const recorded = fake.messages.find((m) => m.id === sent.id);
    expect(recorded?.pings.everyone).toBe(false);
    await sent.edit('edited');
    expect((await edited).content).toBe('edited');
    expect(recorded?.content).toBe('edited');
    expect(recorded?.edits).toBe(1);
    const withFile = await channel.send({ files: [{ attachment: Buffer.from([1, 2, 3]), name: 'x.bin' }] });
    expect(fake.messages.find((m) => m.id === withFile.id)?.attachments[0]?.data).toEqual(Buffer.from([1, 2, 3]));
    await withFile.delete();
    expect(fake.messages.find((m) => m.id === withFile.id)?.deleted).toBe(true);
    const member = await client.guilds.cache.get(DEFAULT_IDS.guild)!.members.fetch({ user: DEFAULT_IDS.alice, force: true });
    expect(member.user.username).toBe('alice');
    expect(fake.requests.some((r) => r.path === `/guilds/${DEFAULT_IDS.guild}/members/${DEFAULT_IDS.alice}`)).toBe(true);
    await expect(channel.send('')).rejects.toMatchObject({ code: 50006 });
  });
});

describe('buttons and member uploads', () => {
  it('a click on a bot message arrives as a ButtonInteraction; update (7) edits that message', async () => {
    const { interaction: command } = await dispatch<ChatInputCommandInteraction>({
      channelId: DEFAULT_IDS.general,
      user: { id: DEFAULT_IDS.alice, username: 'alice' },
      name: 'ask',
    });
    await command.reply({
      content: 'Sure?',
      components: [{ type: 1, components: [{ type: 2, style: 1, custom_id: 'yes', label: 'Yes' }] }],
    });
    const asked = fake.messages.at(-1)!;
    // A custom_id the message does not carry cannot be clicked.
    await expect(
      fake.sendInteraction({
        type: 3,
        channelId: DEFAULT_IDS.general,
        user: { id: DEFAULT_IDS.alice, username: 'alice' },
        name: '',
        component: { messageId: asked.id, customId: 'no' },
      }),
    ).rejects.toThrow(/no component no/);
    const { interaction, handle } = await dispatch<Interaction>({
      type: 3,
      channelId: DEFAULT_IDS.general,
      user: { id: DEFAULT_IDS.alice, username: 'alice' },
      name: '',
      component: { messageId: asked.id, customId: 'yes' },
    });
    expect(interaction.isButton() && interaction.customId).toBe('yes');
    expect(interaction.isButton() && interaction.message.id).toBe(asked.id);
    if (interaction.isButton()) await interaction.update({ content: 'Done', components: [] });
    const response = await handle.waitForResponse((r) => r.kind === 'callback');
    expect(response.type).toBe(7);
    expect(fake.messages.find((m) => m.id === asked.id)).toMatchObject({ content: 'Done', components: [] });
  });

  it("a member's upload arrives resolved on an attachment option and downloads byte for byte", async () => {
    const upload = fake.uploadAttachment({ filename: 'dict.csv', data: Buffer.from('a,b\n'), contentType: 'text/csv' });
    const { interaction } = await dispatch<ChatInputCommandInteraction>({
      channelId: DEFAULT_IDS.general,
      user: { id: DEFAULT_IDS.bob, username: 'bob' },
      name: 'dictionary',
      options: [{ name: 'file', type: ApplicationCommandOptionType.Attachment, value: upload.id }],
    });
    const file = interaction.options.getAttachment('file', true);
    expect([file.name, file.size]).toEqual(['dict.csv', 4]);
    expect(Buffer.from(await (await fetch(file.url)).arrayBuffer()).toString()).toBe('a,b\n');
    await interaction.reply({ content: 'ok' });
  });
});

describe("a registered command's channel options", () => {
  const HIDDEN = '1100000000000000901';
  const FORUM = '1100000000000000902';
  const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
  const bob = { id: DEFAULT_IDS.bob, username: 'bob' };
  const owner = { id: DEFAULT_IDS.owner, username: 'owner' };
  const deny = (bits: bigint) => ({ id: DEFAULT_IDS.guild, type: 0 as const, allow: '0', deny: bits.toString() });

  it("take only what a member's client offers: a channel of the option's types that the member can view", async () => {
    fake.guilds[0]!.channels.push(
      { id: HIDDEN, name: 'staff', type: 0, permissionOverwrites: [deny(PermissionFlagsBits.ViewChannel)] },
      { id: FORUM, name: 'forum', type: 15 },
    );
    const channel = { type: ApplicationCommandOptionType.Channel, name: 'channel', description: 'a channel' } as const;
    await client.rest.put(Routes.applicationCommands(client.application.id), {
      body: [
        { name: 'pick', description: 'pick', options: [{ ...channel, channel_types: [0, 12, 15] }] },
        {
          name: 'nested',
          description: 'nested',
          options: [
            {
              type: ApplicationCommandOptionType.Subcommand,
              name: 'add',
              description: 'add',
              options: [{ ...channel, channel_types: [0] }],
            },
          ],
        },
      ],
    });
    const { id: secretThread } = await fake.createThread({ parentId: DEFAULT_IDS.general, name: 'secret', type: 12, owner: bob });
    const pick = (user: { id: string; username: string }, value: string) =>
      fake.sendInteraction({ channelId: DEFAULT_IDS.general, user, name: 'pick', options: [{ name: 'channel', type: 7, value }] });
    const code = (promise: Promise<unknown>) =>
      promise.then(
        () => 'offered',
        (e: { code?: string }) => e.code,
      );
    expect(await code(pick(alice, FORUM))).toBe('offered');
    expect(await code(pick(alice, DEFAULT_IDS.general))).toBe('offered');
    // Not of its types, not viewable (an overwrite; a private thread she is not in), not a channel at all.
    expect(await code(pick(alice, DEFAULT_IDS.voice))).toBe('not_offered');
    expect(await code(pick(alice, HIDDEN))).toBe('not_offered');
    expect(await code(pick(alice, secretThread))).toBe('not_offered');
    expect(await code(pick(alice, '1100000000000000999'))).toBe('not_offered');
    // The owner views everything; the thread's member sees it.
    expect(await code(pick(owner, HIDDEN))).toBe('offered');
    expect(await code(pick(bob, secretThread))).toBe('offered');
    // Options of a subcommand are checked the same way.
    const nested = (value: string) =>
      fake.sendInteraction({
        channelId: DEFAULT_IDS.general,
        user: alice,
        name: 'nested',
        options: [{ name: 'add', type: ApplicationCommandOptionType.Subcommand, options: [{ name: 'channel', type: 7, value }] }],
      });
    expect(await code(nested(FORUM))).toBe('not_offered');
    expect(await code(nested(DEFAULT_IDS.chat))).toBe('offered');
  });
});
