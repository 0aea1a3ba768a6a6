import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  DEFAULT_IDS,
  PERMISSIONS,
  defaultGuild,
  startFakeVoiceServer,
  trustCertificate,
  type FakeVoiceServer,
  type InteractionResponse,
} from '@yomiage/local-discord';
import { standardRequests, startHarness, type Harness } from '../support/bot-harness.ts';
import { approveAtLocalDiscord, DashboardClient, startHarnessDashboard } from '../support/dashboard-client.ts';
import { t } from '../../src/i18n/texts.ts';
import { emulatorGate } from '../support/emulator-gate.ts';

// Several text channels read in one call, against the whole bot in this process (real discord.js
// on the local Discord, the TLS voice server, the emulator, SQLite): a member in the call adds the
// channel they type /join in with a button, up to the server's number; the call's one queue reads
// both channels in the order their messages arrived; /leave in one of them stops just that one;
// the voice status, /diagnose and the dashboard's health card name them; a channel someone in the
// call cannot view is added but not read there (its author is told), and never named to those who
// cannot view it. Alice is in the call; carol is not; bob (Moderator: Manage Server, Move Members) is
// not either. #secret is for moderators (and the bot) only, so alice, in the call, cannot view it;
// dave is a moderator denied #secret by name. The emulator holds
// standard requests while `gate.hold()` is on, so messages wait in the queue behind one being made.
const guildId = DEFAULT_IDS.guild;
const { general, chat, voice: VOICE } = DEFAULT_IDS;
const GAMES = '1100000000000000121';
const SECRET = '1100000000000000122';
const alice = { id: DEFAULT_IDS.alice, username: 'alice', globalName: 'Alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob', globalName: 'Bob' };
const owner = { id: DEFAULT_IDS.owner, username: 'owner', globalName: 'Owner' };
const carol = { id: '1000000000000000051', username: 'carol', globalName: 'Carol' };
const dave = { id: '1000000000000000052', username: 'dave', globalName: 'Dave' };
type User = { id: string; username: string; globalName?: string };

/** Standard requests wait (logged, unanswered) until gate.release(). */
const gate = emulatorGate();

let voice: FakeVoiceServer;
let h: Harness;

beforeAll(async () => {
  voice = await startFakeVoiceServer();
  trustCertificate(voice.caCertPem);
  const guild = defaultGuild();
  const view = PERMISSIONS.ViewChannel.toString();
  guild.channels.find((c) => c.id === VOICE)!.permissionOverwrites = [
    { id: DEFAULT_IDS.bot, type: 1, allow: String(PERMISSIONS.SetVoiceChannelStatus), deny: '0' },
  ];
  guild.channels.push(
    { id: GAMES, name: 'games', type: 0, position: 2 },
    {
      id: SECRET,
      name: 'secret',
      type: 0,
      position: 3,
      permissionOverwrites: [
        { id: guildId, type: 0, allow: '0', deny: view },
        { id: DEFAULT_IDS.moderatorRole, type: 0, allow: view, deny: '0' },
        { id: DEFAULT_IDS.bot, type: 1, allow: view, deny: '0' },
        { id: dave.id, type: 1, allow: '0', deny: view },
      ],
    },
  );
  guild.members.push(
    { user: carol, roles: [], joinedAt: '2024-01-01T00:00:00.000Z' },
    { user: dave, roles: [DEFAULT_IDS.moderatorRole], joinedAt: '2024-01-01T00:00:00.000Z' },
  );
  h = await startHarness({
    discord: { voiceEndpoint: () => voice.endpoint, guilds: [guild] },
    emulator: { sleep: gate.sleep },
    env: { AUTO_READ_MAX_AGE_SECONDS: '600' },
  });
  h.emulator.setLatency('standard', 1);
  // Read at speed 4: the clips are a quarter as long, and voice plays in real time.
  await h.bot.context.repos.guildSettings.update(guildId, { speed: 4 });
  await h.discord.setVoiceState(alice.id, guildId, VOICE);
  voice.simulateListener({ guildId, channelId: VOICE, userId: alice.id });
  const join = await h.discord.sendInteraction({ channelId: general, user: alice, name: 'join', locale: 'en-US' });
  expect(String((await join.waitForResponse((r) => r.kind === 'editOriginal', 30_000)).data?.content)).toContain('Joined');
  await voice.waitForDave(guildId);
}, 60_000);
afterEach(gate.release);
afterAll(async () => {
  gate.release();
  await h?.close();
  await voice?.close();
});

const status = () => h.discord.guilds[0]!.channels.find((c) => c.id === VOICE)!.status ?? null;
const reads = () => h.bot.context.voice.at(guildId, VOICE)?.textChannelIds;
const texts = (from: number) =>
  standardRequests(h.emulator)
    .slice(from)
    .map((r) => r.text)
    .join('|');
const until = <T>(what: string, find: () => T | undefined | false) => vi.waitUntil(find, { timeout: 20_000, interval: 20, message: what });
const fateOf = (messageId: string) => h.bot.context.diagnosis.fates.get(guildId, messageId);
const write = async (author: User, content: string, channelId: string) => (await h.discord.sendMessage({ channelId, author, content })).id;
const content = (r: InteractionResponse) => String(r.data?.content ?? '');

/** A slash command: its interaction and its first answer. */
async function run(user: User, name: string, channelId: string, locale: string, options: unknown[] = []) {
  const i = await h.discord.sendInteraction({ channelId, user, name, locale, options: options as never });
  return { i, first: await i.waitForResponse((r) => r.kind === 'callback', 20_000) };
}
/** The labels of an answer's buttons. */
const labels = (r: InteractionResponse) =>
  ((r.data?.components as Array<{ components: Array<{ label: string }> }>) ?? []).flatMap((row) => row.components.map((b) => b.label));
/** Clicks the button labelled `label` of the question `asked` answered with; the click's own answer. */
async function click(asked: Awaited<ReturnType<typeof run>>, label: string, user: User, channelId: string, locale: string) {
  const rows = (asked.first.data?.components as Array<{ components: Array<{ custom_id: string; label: string }> }>) ?? [];
  const button = rows.flatMap((row) => row.components).find((b) => b.label === label)!;
  const component = { messageId: asked.i.original()!.id, customId: button.custom_id };
  const c = await h.discord.sendInteraction({ type: 3, channelId, user, name: '', locale, component });
  return c.waitForResponse((r) => r.kind === 'callback', 20_000);
}
async function diagnose(user: User, locale: string, channelId: string): Promise<string> {
  const i = await h.discord.sendInteraction({ channelId, user, name: 'diagnose', locale });
  return content(await i.waitForResponse((r) => r.kind === 'editOriginal', 20_000));
}

describe('several text channels in one call', () => {
  it('a member in the call adds the channel they type /join in (ja): both are read in the one queue in order of arrival; the status and /diagnose name both', async () => {
    const asked = await run(alice, 'join', chat, 'ja');
    expect(asked.first.data?.flags, 'private').toBe(64);
    expect(content(asked.first)).toBe(
      t('ja', 'voice.also_read_question', { voice: `<#${VOICE}>`, channels: `<#${general}>`, text: `<#${chat}>`, max: 3, seconds: 120 }),
    );
    expect(labels(asked.first)).toEqual(['このチャンネルも読み上げる', 'やめておく']);
    // Asking changed nothing yet.
    expect(reads()).toEqual([general]);
    const added = await click(asked, 'このチャンネルも読み上げる', alice, chat, 'ja');
    // Said in the channel, for everyone whose messages are read from now on.
    expect(added.type).toBe(4);
    expect(added.data?.flags ?? 0).toBe(0);
    expect(content(added)).toBe(`このチャンネル（<#${chat}>）も <#${VOICE}> で読み上げます。`);
    await until('the question closed', () => asked.i.original()?.content.includes('を追加しました'));
    expect(reads()).toEqual([general, chat]);
    await until('the status names both', () => status() === '📖 #general、#chat を読み上げ中');

    // One queue for the call: messages of both channels, read in the order they arrived.
    const from = standardRequests(h.emulator).length;
    const heardBefore = voice.utterances(guildId).length;
    gate.hold();
    await write(alice, 'いちばん目の話', general);
    await until('the first asked', () => texts(from).includes('いちばん目の話'));
    const second = await write(owner, 'にばん目の話', chat);
    const third = await write(alice, 'さんばん目の話', general);
    await until('both queued', () => fateOf(second)?.fate === 'queued' && fateOf(third)?.fate === 'queued');
    gate.release();
    await until('all read', () => fateOf(third)?.fate === 'read' && fateOf(second)?.fate === 'read');
    const said = texts(from);
    expect(said.indexOf('いちばん目の話')).toBeLessThan(said.indexOf('にばん目の話'));
    expect(said.indexOf('にばん目の話')).toBeLessThan(said.indexOf('さんばん目の話'));
    expect(fateOf(second)).toMatchObject({ voiceChannelId: VOICE });
    expect(voice.utterances(guildId).length).toBeGreaterThan(heardBefore);

    expect(await diagnose(alice, 'ja', chat)).toContain(`読み上げるテキストチャンネル: <#${general}>、<#${chat}>`);
    expect(await diagnose(carol, 'en-US', general)).toContain(`Text channels read: <#${general}>, <#${chat}>`);
  }, 60_000);

  it('refused, nothing changed: a member outside the call (en), and a channel over the server number (ja, en)', async () => {
    const outside = await run(carol, 'join', GAMES, 'en-US', [{ name: 'channel', type: 7, value: VOICE }]);
    expect(outside.first.data?.flags).toBe(64);
    expect(content(outside.first)).toBe(
      `Only a member in <#${VOICE}>, or with Move Members there, can change which text channels it reads. Nothing was changed.`,
    );
    const set = await run(bob, 'config', general, 'en-US', [
      { name: 'text-channels', type: 1, options: [{ name: 'value', type: 4, value: 2 }] },
    ]);
    expect(content(set.first)).toContain('= 2');
    const full = await run(alice, 'join', GAMES, 'ja');
    expect(full.first.data?.flags).toBe(64);
    expect(content(full.first)).toBe(
      `<#${VOICE}> ではすでに <#${general}> <#${chat}> の 2 チャンネルを読み上げています。このサーバーでは1つの通話で読み上げられるのは 2 チャンネルまでです。` +
        '何も変更していません。追加するには、読み上げをやめるチャンネルで /退出 を使うか、管理者に /設定 読み上げチャンネル数 で上限を変えてもらってください。',
    );
    // Move Members there: may change what the call reads, but not past the number either.
    const moderator = await run(bob, 'join', GAMES, 'en-US', [{ name: 'channel', type: 7, value: VOICE }]);
    expect(content(moderator.first)).toContain('allows 2 per call. Nothing was changed.');
    expect(labels(moderator.first)).toEqual([]);
    expect(reads()).toEqual([general, chat]);
    expect(status()).toBe('📖 #general、#chat を読み上げ中');
    const shown = await run(bob, 'config', general, 'ja', [{ name: 'show', type: 1 }]);
    expect(content(shown.first)).toContain('- 1つの通話で読み上げるテキストチャンネル: 2 チャンネルまで');
    await run(bob, 'config', general, 'en-US', [{ name: 'text-channels', type: 1, options: [{ name: 'value', type: 4, value: 3 }] }]);
  }, 60_000);

  it('a channel someone in the call cannot view: said before it is added; then not read there (its author told), counted but never named', async () => {
    const asked = await run(bob, 'join', SECRET, 'ja', [{ name: 'channel', type: 7, value: VOICE }]);
    expect(content(asked.first)).toContain(`※ いまこの通話には <#${SECRET}> を見られない人がいます。`);
    await click(asked, 'このチャンネルも読み上げる', bob, SECRET, 'ja');
    expect(reads()).toEqual([general, chat, SECRET]);
    await until('the status counts it', () => status() === '📖 #general、#chat ほか1チャンネルを読み上げ中');
    const from = standardRequests(h.emulator).length;
    const notice = h.discord.waitForMessage(
      (m) => m.channelId === SECRET && m.authorId === DEFAULT_IDS.bot && m.content.includes('読み上げていません'),
      20_000,
    );
    const hidden = await write(bob, '内緒の相談です', SECRET);
    await until('not read in the call', () => fateOf(hidden)?.fate === 'hidden');
    expect((await notice).content).toBe(t('ja', 'autoread.hidden_from_listeners', { voice: `<#${VOICE}>` }));
    expect(texts(from)).not.toContain('内緒の相談です');
    // Alice (in the call) cannot view #secret: /diagnose counts it for her, and names it for bob.
    expect(await diagnose(alice, 'ja', general)).toContain(
      `読み上げるテキストチャンネル: <#${general}>、<#${chat}>、あなたが見られないチャンネル 1 件`,
    );
    expect(await diagnose(bob, 'en-US', general)).toContain(`Text channels read: <#${general}>, <#${chat}>, <#${SECRET}>`);
  }, 60_000);

  it("the dashboard's health card lists the text channels the call reads: named to an admin who may view them, the others only counted", async () => {
    const dashboard = await startHarnessDashboard(h);
    try {
      const health = async (userId: string) => {
        const client = new DashboardClient(dashboard.url);
        await client.signIn((url) => approveAtLocalDiscord(url, userId));
        const res = await client.api('GET', `/guilds/${guildId}/health`);
        expect(res.status).toBe(200);
        return res.body as Array<Record<string, unknown>>;
      };
      const named = [
        { id: general, name: 'general' },
        { id: chat, name: 'chat' },
      ];
      const forBob = await health(bob.id);
      expect(forBob).toEqual([expect.objectContaining({ channelId: VOICE, name: 'Voice' })]);
      expect(forBob[0]).toMatchObject({ textChannels: [...named, { id: SECRET, name: 'secret' }], hiddenTextChannels: 0 });
      // Dave manages the server but may not view #secret: counted, its name and id nowhere in the answer.
      const forDave = await health(dave.id);
      expect(forDave[0]).toMatchObject({ textChannels: named, hiddenTextChannels: 1 });
      expect(JSON.stringify(forDave)).not.toMatch(new RegExp(`secret|${SECRET}`));
    } finally {
      await dashboard.close();
    }
  }, 60_000);

  it('/leave in one of them asks (ja): "this channel only" stops it and drops what of it waits; the others read on; then /leave (en) may leave', async () => {
    const from = standardRequests(h.emulator).length;
    gate.hold();
    await write(alice, 'よんばん目の話', general);
    await until('the fourth asked', () => texts(from).includes('よんばん目の話'));
    const waiting = await write(owner, '読まれずに終わる話', chat);
    await until('queued', () => fateOf(waiting)?.fate === 'queued');
    const asked = await run(alice, 'leave', chat, 'ja');
    expect(asked.first.data?.flags).toBe(64);
    expect(content(asked.first)).toBe(
      t('ja', 'voice.leave_question', { voice: `<#${VOICE}>`, channels: `<#${general}> <#${SECRET}>`, seconds: 120 }),
    );
    expect(labels(asked.first)).toEqual(['このチャンネルだけやめる', 'ボイスチャンネルから退出']);
    const stopped = await click(asked, 'このチャンネルだけやめる', alice, chat, 'ja');
    expect(stopped.data?.flags ?? 0).toBe(0);
    expect(content(stopped)).toBe(
      `このチャンネル（<#${chat}>）の読み上げをやめました。<#${VOICE}> ではほかのチャンネルの読み上げを続けます。`,
    );
    expect(reads()).toEqual([general, SECRET]);
    expect(fateOf(waiting)).toMatchObject({ fate: 'cleared', reason: 'unbound' });
    await until('the status follows', () => status() === '📖 #general ほか1チャンネルを読み上げ中');
    gate.release();
    const after = await write(owner, 'もう読まれない話', chat);
    const fifth = await write(alice, 'ごばん目の話', general);
    await until('the fifth read', () => fateOf(fifth)?.fate === 'read');
    expect(texts(from)).not.toMatch(/読まれずに終わる話|もう読まれない話/);
    expect(fateOf(after)).toBeUndefined();
    // "Why wasn't this read?" says so.
    const why = await h.discord.sendInteraction({
      channelId: chat,
      user: owner,
      name: "Why wasn't this read?",
      locale: 'ja',
      target: { messageId: waiting },
    });
    expect(content(await why.waitForResponse((r) => r.kind === 'callback', 20_000))).toContain(
      '読み上げていません: /退出 でこのチャンネルの読み上げをやめました',
    );

    // Two channels still read: /leave in one asks again; "leave" leaves the call.
    const again = await run(alice, 'leave', general, 'en-US');
    expect(labels(again.first)).toEqual(['Stop this channel only', 'Leave the voice channel']);
    const left = await click(again, 'Leave the voice channel', alice, general, 'en-US');
    expect(content(left)).toBe('Left the voice channel.');
    expect(h.bot.context.voice.sessions(guildId)).toEqual([]);
    await until('the status cleared', () => status() === null || status() === '');
  }, 60_000);

  it('added in English too; disconnected by a moderator, the call tells every channel it read, once each', async () => {
    const join = await run(alice, 'join', general, 'en-US');
    await join.i.waitForResponse((r) => r.kind === 'editOriginal', 30_000);
    const asked = await run(alice, 'join', GAMES, 'en-US');
    expect(labels(asked.first)).toEqual(['Also read this channel', 'Cancel']);
    const added = await click(asked, 'Also read this channel', alice, GAMES, 'en-US');
    expect(content(added)).toBe(`This channel (<#${GAMES}>) is now read aloud in <#${VOICE}> too.`);
    expect(reads()).toEqual([general, GAMES]);
    const told = (channelId: string) =>
      h.discord.messages.filter((m) => m.channelId === channelId && m.content === t('ja', 'voice.disconnected'));
    await h.discord.disconnectMember(guildId, DEFAULT_IDS.bot);
    await until('both told', () => told(general).length === 1 && told(GAMES).length === 1);
    expect(told(chat)).toEqual([]);
  }, 60_000);
});
