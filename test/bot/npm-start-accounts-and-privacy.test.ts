import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { APIApplicationCommandInteractionDataOption } from 'discord.js';
import { startEmulator, type Emulator } from '@yomiage/tts-emulator';
import {
  DEFAULT_IDS,
  defaultGuild,
  PERMISSIONS,
  startFakeDiscord,
  startFakeVoiceServer,
  type FakeDiscord,
  type FakeVoiceServer,
} from '@yomiage/local-discord';
import type { InteractionResponse } from '@yomiage/local-discord/types';
import { standardRequests } from '../support/bot-harness.ts';
import { startChildBot, type ChildBot } from '../support/child-bot.ts';
import { approveAtLocalDiscord, DashboardClient } from '../support/dashboard-client.ts';

// Who hears, sees and controls what once the bot has two accounts, threads and a dashboard, through
// `npm start` as a child process (two accounts in the server, the dashboard on a port of its own)
// against the loopback Discord with its registered commands (`npm run deploy-commands`: a member's
// client offers only what they declare) and the emulator: the voice channel status names no thread
// not everyone can see, a voice preview plays in the asking member's call, a channel mention in /say
// is named for the call that hears it, Move Members counts in the voice channel of the account
// concerned, two /joins at once take two accounts, an admin's dashboard lists and accepts only the
// channels they can view, and /autoread takes a forum. One bot for the file; the steps share its state.
const guildId = DEFAULT_IDS.guild;
const VOICE_A = DEFAULT_IDS.voice;
const TEXT_A = DEFAULT_IDS.general;
const VOICE_B = '1100000000000000104';
const TEXT_B = '1100000000000000105';
const MODS = '1100000000000000106'; // the Moderator role only (bob), and the owner
const COUNCIL = '1100000000000000107'; // the owner only
const COUNCIL_VOICE = '1100000000000000108'; // the owner only
const FORUM = '1100000000000000109';
const EXTRA = { id: '1200000000000000002', username: 'yomiage-2' };
const MAIN = DEFAULT_IDS.bot;
const alice = { id: DEFAULT_IDS.alice, username: 'alice' }; // no special permission
const bob = { id: DEFAULT_IDS.bob, username: 'bob' }; // Moderator: Manage Server, Move Members (denied in Voice 2)
const owner = { id: DEFAULT_IDS.owner, username: 'owner' };
type User = { id: string; username: string };
const EPHEMERAL = 64;

const everyone = (allow: bigint, deny: bigint) => ({ id: guildId, type: 0 as const, allow: allow.toString(), deny: deny.toString() });
const moderators = (allow: bigint, deny: bigint) => ({
  id: DEFAULT_IDS.moderatorRole,
  type: 0 as const,
  allow: allow.toString(),
  deny: deny.toString(),
});
const guild = defaultGuild();
guild.channels.find((c) => c.id === VOICE_A)!.permissionOverwrites = [everyone(PERMISSIONS.SetVoiceChannelStatus, 0n)];
guild.channels.push(
  {
    id: VOICE_B,
    name: 'Voice 2',
    type: 2,
    position: 1,
    permissionOverwrites: [everyone(PERMISSIONS.SetVoiceChannelStatus, 0n), moderators(0n, PERMISSIONS.MoveMembers)],
  },
  { id: TEXT_B, name: 'text-2', type: 0, position: 2, parentId: '1100000000000000100' },
  {
    id: MODS,
    name: 'mods',
    type: 0,
    position: 3,
    permissionOverwrites: [everyone(0n, PERMISSIONS.ViewChannel), moderators(PERMISSIONS.ViewChannel, 0n)],
  },
  { id: COUNCIL, name: 'council', type: 0, position: 4, permissionOverwrites: [everyone(0n, PERMISSIONS.ViewChannel)] },
  { id: COUNCIL_VOICE, name: 'council-voice', type: 2, position: 5, permissionOverwrites: [everyone(0n, PERMISSIONS.ViewChannel)] },
  { id: FORUM, name: 'forum', type: 15, position: 6 },
);

let emulator: Emulator;
let discord: FakeDiscord;
let voice: FakeVoiceServer;
let dataDir: string;
let bot: ChildBot;
let dashboardUrl: string;

/** `npm run deploy-commands`'s script with this Node: the commands a member's client then offers. */
async function deployCommands(): Promise<void> {
  const script = resolve(import.meta.dirname, '..', '..', 'src', 'discord', 'deploy-commands.ts');
  await promisify(execFile)(process.execPath, [script], {
    env: { PATH: process.env.PATH ?? '', DISCORD_TOKEN: discord.token, DISCORD_API_URL: discord.apiUrl },
  });
}

beforeAll(async () => {
  voice = await startFakeVoiceServer();
  [emulator, discord] = await Promise.all([
    startEmulator({ control: true }),
    startFakeDiscord({ guilds: [guild], voiceServer: voice, extraBots: [{ user: EXTRA, guildIds: [guildId] }] }),
  ]);
  dataDir = mkdtempSync(join(tmpdir(), 'yomiage-accounts-privacy-'));
  [bot] = await Promise.all([
    startChildBot({
      discord,
      emulator,
      dataDir,
      caCertPem: voice.caCertPem,
      env: {
        EXTRA_DISCORD_TOKENS: discord.bots[1]!.token,
        DASHBOARD_PORT: '0',
        DISCORD_CLIENT_SECRET: discord.bots[0]!.clientSecret,
      },
    }),
    deployCommands(),
  ]);
  dashboardUrl = String(bot.logs.find((l) => l.msg === 'dashboard listening')!.url);
  discord.bots[0]!.redirectUris.push(`${dashboardUrl}/auth/callback`);
}, 60_000);

afterAll(async () => {
  await bot?.stop('SIGKILL');
  await Promise.all([emulator?.close(), discord?.close(), voice?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

/** A slash command's first answer with text (the reply, or the deferred reply's edit). */
async function command(
  user: User,
  channelId: string,
  name: string,
  options: APIApplicationCommandInteractionDataOption[] = [],
  locale = 'en-US',
): Promise<InteractionResponse> {
  const i = await discord.sendInteraction({ channelId, user, name, locale, options });
  const answered = (r: InteractionResponse) => (r.kind === 'callback' || r.kind === 'editOriginal') && r.data?.content !== undefined;
  return i.waitForResponse(answered, 30_000);
}
const text = (r: InteractionResponse) => String(r.data?.content ?? '');
/** Which of the bot's accounts is in `channelId` now, as the local Discord has it. */
const accountIn = (channelId: string) =>
  discord.guilds[0]!.voiceStates.filter((v) => v.channelId === channelId && [MAIN, EXTRA.id].includes(v.userId)).map((v) => v.userId);
const statusOf = (channelId: string) => discord.guilds[0]!.channels.find((c) => c.id === channelId)!.status ?? null;
async function joinVoice(user: User, channelId: string, from: string): Promise<void> {
  await discord.setVoiceState(user.id, guildId, channelId);
  expect(text(await command(user, from, 'join'))).toContain('Joined');
}

/** Clicks the button labelled `label` under the question `asked` (message `messageId`); the click's answer. */
async function clickButton(messageId: string, asked: InteractionResponse, label: string, user: User, channelId: string) {
  const rows = (asked.data?.components as Array<{ components: Array<{ custom_id: string; label: string }> }>) ?? [];
  const button = rows.flatMap((row) => row.components).find((b) => b.label === label);
  expect(button, label).toBeDefined();
  const component = { messageId, customId: button!.custom_id };
  const c = await discord.sendInteraction({ type: 3, channelId, user, name: '', locale: 'en-US', component });
  return c.waitForResponse((r) => r.kind === 'callback', 30_000);
}
/** `command` typed in `channelId`, then the button labelled `label` of the question it asks: the click's answer. */
async function answered(user: User, channelId: string, name: string, label: string): Promise<string> {
  const i = await discord.sendInteraction({ channelId, user, name, locale: 'en-US' });
  const asked = await i.waitForResponse((r) => r.kind === 'callback', 30_000);
  return text(await clickButton(i.original()!.id, asked, label, user, channelId));
}
/** /join typed in `channelId` while the bot is in the member's call: the channel is read there too. */
const alsoRead = async (user: User, channelId: string) =>
  expect(await answered(user, channelId, 'join', 'Also read this channel')).toContain('is now read aloud');
/** /leave typed in one of several channels the call reads: that channel only. */
const stopReading = async (user: User, channelId: string) =>
  expect(await answered(user, channelId, 'leave', 'Stop this channel only')).toContain('Stopped reading this channel');

describe('npm start with two accounts: names, calls and controls', () => {
  it('the voice channel status names a public thread and a channel, never a private thread', async () => {
    await joinVoice(alice, VOICE_A, TEXT_A);
    await joinVoice(bob, VOICE_B, TEXT_B);
    expect([accountIn(VOICE_A), accountIn(VOICE_B)]).toEqual([[MAIN], [EXTRA.id]]);
    // The server reads in Japanese (its preferred locale); the extra account sets its channel's status too.
    await vi.waitFor(() => expect([statusOf(VOICE_A), statusOf(VOICE_B)]).toEqual(['📖 #general を読み上げ中', '📖 #text-2 を読み上げ中']));
    // The call reads the threads too (/join typed in each, then its button): a private thread is counted, never named.
    const secret = await discord.createThread({ parentId: TEXT_A, name: '処分検討-山田', type: 12, owner: alice });
    await alsoRead(alice, secret.id);
    await vi.waitFor(() => expect(statusOf(VOICE_A)).toBe('📖 #general ほか1チャンネルを読み上げ中'));
    const open = await discord.createThread({ parentId: TEXT_A, name: '雑談スレ', type: 11, owner: alice });
    await alsoRead(alice, open.id);
    await vi.waitFor(() => expect(statusOf(VOICE_A)).toBe('📖 #general、#雑談スレ ほか1チャンネルを読み上げ中'));
    await stopReading(alice, secret.id);
    await vi.waitFor(() => expect(statusOf(VOICE_A)).toBe('📖 #general、#雑談スレ を読み上げ中'));
    // The private thread's name was never sent as the status, not even for a moment.
    const statuses = discord.requests.filter((r) => r.path === `/channels/${VOICE_A}/voice-status`).map((r) => JSON.stringify(r.body));
    expect(statuses.length).toBeGreaterThanOrEqual(4);
    expect(statuses.join('\n')).not.toContain('処分検討');
    await stopReading(alice, open.id);
    await vi.waitFor(() => expect(statusOf(VOICE_A)).toBe('📖 #general を読み上げ中'));
  }, 60_000);

  it("/voice preview plays in the asking member's call, not in the call of the text channel it was typed in", async () => {
    voice.simulateListener({ guildId, channelId: VOICE_A, userId: alice.id });
    voice.simulateListener({ guildId, channelId: VOICE_B, userId: bob.id });
    await Promise.all([voice.waitForDave(guildId, 20_000, VOICE_A), voice.waitForDave(guildId, 20_000, VOICE_B)]);
    const at = performance.now();
    // Alice listens in Voice (the main account); #text-2 is read in Voice 2 (the extra account).
    const i = await discord.sendInteraction({
      channelId: TEXT_B,
      user: alice,
      name: 'voice',
      locale: 'en-US',
      options: [{ name: 'preview', type: 1, options: [{ name: 'voice', type: 3, value: 'ja-JP-Wavenet-C' }] }],
    });
    expect((await i.waitForResponse((r) => r.kind === 'callback', 15_000)).data?.flags).toBe(EPHEMERAL);
    const heard = await voice.waitForAudio({ guildId, channelId: VOICE_A, startedAfter: at, minDurationMs: 300, timeoutMs: 20_000 });
    expect(heard.userId).toBe(MAIN);
    expect(voice.utterances(guildId, { channelId: VOICE_B }).filter((u) => u.start >= at)).toEqual([]);
    // Played, not attached: the reply says so and carries no file.
    const final = await i.waitForResponse(
      (r) => r.kind === 'editOriginal' && String(r.data?.content).includes('Speaking in the voice channel'),
      15_000,
    );
    expect(final.files).toEqual([]);
  }, 60_000);

  it('/say names a channel mention only when everyone in the call that plays it can view that channel', async () => {
    // The owner listens with the main account; bob and alice (who cannot view #mods) with the extra one.
    await discord.setVoiceState(owner.id, guildId, VOICE_A);
    await discord.setVoiceState(alice.id, guildId, VOICE_B);
    const before = standardRequests(emulator).length;
    const said = await command(bob, MODS, 'say', [{ name: 'text', type: 3, value: `<#${MODS}> の件です` }], 'ja');
    expect(said.data?.flags ?? 0).not.toBe(EPHEMERAL);
    await vi.waitUntil(() => standardRequests(emulator).length > before, { timeout: 20_000, message: 'the /say requested' });
    const [request] = standardRequests(emulator).slice(before);
    expect(request!.text).toContain('チャンネル');
    expect(request!.text).not.toContain('mods');
  }, 30_000);

  it('Move Members counts in the voice channel of the account concerned, not where the command was typed', async () => {
    await discord.setVoiceState(bob.id, guildId, null);
    // Bob has Move Members in #text-2 (his role) but not in Voice 2, where the extra account reads #text-2 to alice.
    const refused = await command(bob, TEXT_B, 'leave');
    expect(refused.data?.flags).toBe(EPHEMERAL);
    expect(text(refused)).toContain('with the Move Members permission in that channel');
    const ja = await command(bob, TEXT_B, 'leave', [], 'ja');
    expect(text(ja)).toContain('そのチャンネルで「メンバーを移動」権限');
    expect(accountIn(VOICE_B)).toEqual([EXTRA.id]);
    // In Voice, where his role keeps Move Members, he may stop the main account though the owner listens.
    const left = discord.waitForBotVoiceState((s) => s.channelId === null && (s.botId ?? MAIN) === MAIN, 20_000);
    expect(text(await command(bob, TEXT_A, 'leave'))).toBe('Left the voice channel.');
    await left;
    expect(accountIn(VOICE_B)).toEqual([EXTRA.id]);
  }, 30_000);

  it('two /joins at the same moment take two accounts: neither moves the account the other just took', async () => {
    expect(text(await command(alice, TEXT_B, 'leave'))).toBe('Left the voice channel.');
    await vi.waitFor(() => expect([accountIn(VOICE_A), accountIn(VOICE_B)]).toEqual([[], []]));
    const [a, b] = await Promise.all([
      discord.sendInteraction({ channelId: TEXT_A, user: owner, name: 'join', locale: 'en-US' }),
      discord.sendInteraction({ channelId: TEXT_B, user: alice, name: 'join', locale: 'en-US' }),
    ]);
    const joined = (r: InteractionResponse) => r.kind === 'editOriginal' || (r.kind === 'callback' && r.type === 4);
    const answers = await Promise.all([a, b].map((i) => i.waitForResponse(joined, 30_000)));
    expect(answers.map(text)).toEqual([expect.stringContaining(`Joined <#${VOICE_A}>`), expect.stringContaining(`Joined <#${VOICE_B}>`)]);
    await vi.waitFor(() => {
      const [inA, inB] = [accountIn(VOICE_A), accountIn(VOICE_B)];
      expect([inA.length, inB.length]).toEqual([1, 1]);
      expect(new Set([...inA, ...inB]).size).toBe(2);
    });
  }, 60_000);

  it('/autoread add takes a forum channel from its picker, and its posts are read', async () => {
    const added = await command(bob, TEXT_A, 'autoread', [{ name: 'add', type: 1, options: [{ name: 'channel', type: 7, value: FORUM }] }]);
    expect(text(added)).toContain(`<#${FORUM}> will now be read aloud automatically`);
    const before = standardRequests(emulator).length;
    await discord.createForumPost({ forumId: FORUM, name: '週末の予定', author: alice, content: '土曜に集まります' });
    await vi.waitUntil(
      () =>
        standardRequests(emulator)
          .slice(before)
          .some((r) => r.text.includes('土曜に集まります')),
      {
        timeout: 20_000,
        message: 'the forum post requested',
      },
    );
  }, 30_000);
});

describe('npm start: the dashboard shows and accepts only the channels the signed-in member can view', () => {
  async function signedIn(userId: string): Promise<DashboardClient> {
    const client = new DashboardClient(dashboardUrl);
    await client.signIn((url) => approveAtLocalDiscord(url, userId));
    return client;
  }

  it('an admin who cannot view a channel neither sees it listed nor can pick it; the owner can', async () => {
    const admin = await signedIn(bob.id);
    const view = (await admin.api('GET', `/guilds/${guildId}`)).body as {
      readableChannels: { id: string }[];
      voiceChannels: { id: string }[];
    };
    const ids = (list: { id: string }[]) => list.map((c) => c.id);
    expect(ids(view.readableChannels)).toEqual(expect.arrayContaining([TEXT_A, MODS, FORUM]));
    expect(ids(view.readableChannels)).not.toContain(COUNCIL);
    expect(ids(view.voiceChannels)).toEqual(expect.arrayContaining([VOICE_A, VOICE_B]));
    expect(ids(view.voiceChannels)).not.toContain(COUNCIL_VOICE);
    const autoRead = await admin.api('POST', `/guilds/${guildId}/autoread`, { channelId: COUNCIL });
    expect(autoRead.status).toBe(400);
    expect(autoRead.body.message).toContain('that you can view');
    const autoJoin = await admin.api('PATCH', `/guilds/${guildId}/settings`, { autoJoinChannelId: COUNCIL_VOICE });
    expect(autoJoin.status).toBe(400);
    expect((await admin.api('GET', `/guilds/${guildId}`)).body.autoRead).not.toContainEqual(
      expect.objectContaining({ channelId: COUNCIL }),
    );

    const theOwner = await signedIn(owner.id);
    const all = (await theOwner.api('GET', `/guilds/${guildId}`)).body as { readableChannels: { id: string }[] };
    expect(ids(all.readableChannels)).toContain(COUNCIL);
    expect((await theOwner.api('POST', `/guilds/${guildId}/autoread`, { channelId: COUNCIL })).status).toBe(200);
  }, 30_000);

  it("the server's spend per channel names no channel the admin cannot view", async () => {
    // The owner's /say in #council is charged to #council.
    const said = await command(owner, COUNCIL, 'say', [{ name: 'text', type: 3, value: '会議の議題です' }]);
    expect(said.data?.flags ?? 0).not.toBe(EPHEMERAL);
    const admin = await signedIn(bob.id);
    type Row = { channelId: string | null; name: string | null; chars: number; hidden?: boolean };
    const rows = async () => ((await admin.api('GET', `/guilds/${guildId}/usage`)).body as { channels: Row[] }).channels;
    await vi.waitUntil(async () => (await rows()).some((r) => r.hidden), { timeout: 20_000, message: 'the spend in #council counted' });
    const seen = await rows();
    expect(seen.map((r) => r.channelId)).not.toContain(COUNCIL);
    expect(JSON.stringify(seen)).not.toContain('council');
    expect(seen.find((r) => r.hidden)!.chars).toBeGreaterThan(0);
  }, 30_000);
});
