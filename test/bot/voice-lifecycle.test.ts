import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  DEFAULT_IDS,
  PERMISSIONS,
  defaultGuild,
  startFakeVoiceServer,
  trustCertificate,
  type FakeVoiceServer,
} from '@yomiage/local-discord';
import { standardRequests, startHarness, type Harness } from '../support/bot-harness.ts';
import { t } from '../../src/i18n/texts.ts';
import { createLogger } from '../../src/util/log.ts';
import { guildStats } from '../support/guild-stats.ts';

// Restarts, notices and spend with the bot in voice, in process (the child-process versions are in
// npm-start-restarts.test.ts); and the voice channel status while the bot reads: set in the server's
// language naming the text channel read, cleared on /leave; where the bot lacks Set Voice Channel
// Status (Voice 2, Plain), nothing is sent and nothing is logged at warn level.
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob' };
const guildId = DEFAULT_IDS.guild;
const VOICE_2 = '1100000000000000104';
const PLAIN_VOICE = '1100000000000000170';
/** What the bot logs at warn level and above. */
const logs: Array<{ level: number; msg?: string }> = [];

let voice: FakeVoiceServer;
let h: Harness;

beforeAll(async () => {
  voice = await startFakeVoiceServer();
  trustCertificate(voice.caCertPem);
  const guild = defaultGuild();
  guild.channels.push({ id: VOICE_2, name: 'Voice 2', type: 2, position: 1 });
  const allowStatus = { id: DEFAULT_IDS.bot, type: 1 as const, allow: String(PERMISSIONS.SetVoiceChannelStatus), deny: '0' };
  guild.channels.find((c) => c.id === DEFAULT_IDS.voice)!.permissionOverwrites = [allowStatus];
  guild.channels.push({ id: PLAIN_VOICE, name: 'Plain', type: 2, position: 2 });
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) logs.push(JSON.parse(line) as { level: number; msg?: string });
      done();
    },
  });
  h = await startHarness({
    discord: { voiceEndpoint: () => voice.endpoint, guilds: [guild] },
    env: { AUTO_READ_MAX_AGE_SECONDS: '600' },
    emulator: { jobs: { pendingMs: 100, runningMs: 100, minPollAfterMs: 50, pollAfterMs: 50 } },
    // A lease far shorter than a clip: a job whose audio is still playing must stay this process's.
    bot: { voice: { reconnectGraceMs: 1_000 }, jobs: { leaseMs: 300 }, logger: createLogger({ level: 'warn', destination }) },
  });
  await h.discord.setVoiceState(alice.id, guildId, DEFAULT_IDS.voice);
  // Alice's client in the call, so the bot's audio is end-to-end encrypted as on Discord (DAVE).
  voice.simulateListener({ guildId, channelId: DEFAULT_IDS.voice, userId: alice.id });
}, 60_000);
afterAll(async () => {
  await h?.close();
  await voice?.close();
});

async function join(user = alice): Promise<void> {
  const interaction = await h.discord.sendInteraction({ channelId: DEFAULT_IDS.general, user, name: 'join', locale: 'en-US' });
  const reply = await interaction.waitForResponse((r) => r.kind === 'editOriginal', 30_000);
  expect(String(reply.data?.content)).toContain('Joined');
}

const requested = (text: string, from = 0) =>
  standardRequests(h.emulator)
    .slice(from)
    .some((r) => r.text.includes(text));

describe('in voice', () => {
  it('/say attach:true plays the audio and attaches the MP3', async () => {
    await join();
    const started = performance.now();
    const i = await h.discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: alice,
      name: 'say',
      locale: 'en-US',
      options: [
        { name: 'text', type: 3, value: '添付もしてください' },
        { name: 'attach', type: 5, value: true },
      ],
    });
    const withFile = await i.waitForResponse((r) => r.files.length > 0, 20_000);
    expect(withFile.files[0]!.name).toMatch(/\.mp3$/);
    const heard = await voice.waitForAudio({ guildId, startedAfter: started, minDurationMs: 300, timeoutMs: 20_000 });
    expect(heard.rmsDb).toBeGreaterThan(-40);
  });

  it('/narrate played in voice is delivered once, however much longer than the job lease it plays', async () => {
    const started = performance.now();
    const i = await h.discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: alice,
      name: 'narrate',
      locale: 'en-US',
      options: [
        { name: 'text', type: 3, value: 'Longer than its lease.' },
        { name: 'voice', type: 3, value: 'Luna' },
        { name: 'speed', type: 10, value: 1.5 },
      ],
    });
    const heard = await voice.waitForAudio({ guildId, startedAfter: started, minDurationMs: 300, timeoutMs: 20_000 });
    expect(heard.durationMs).toBeGreaterThan(1_000);
    await vi.waitUntil(() => h.bot.context.repos.jobs.listUnfinished().length === 0, {
      timeout: 10_000,
      message: 'the job marked delivered',
    });
    // Played, never also posted by a takeover of the job while it played.
    expect(i.responses().filter((r) => r.files.length > 0)).toEqual([]);
    expect(i.responses().some((r) => String(r.data?.content).includes('Speaking'))).toBe(true);
  });

  it('after /leave and /join the reader starts afresh: the next message is named again', async () => {
    const said = async (content: string) => {
      const before = standardRequests(h.emulator).length;
      await h.discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content });
      return vi.waitUntil(
        () =>
          standardRequests(h.emulator)
            .slice(before)
            .find((r) => r.text.includes(content))?.text,
        { timeout: 20_000, message: content },
      );
    };
    expect(await said('はじめの発言')).toBe('Alice、はじめの発言');
    const leave = await h.discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: alice, name: 'leave', locale: 'en-US' });
    expect(String((await leave.waitForResponse((r) => r.kind === 'callback')).data?.content)).toContain('Left');
    await join();
    // Seconds later, the same author: still named, as in a new session.
    expect(await said('戻ってからの発言')).toBe('Alice、戻ってからの発言');
  });

  it('while every human in the channel is deafened, messages are not synthesised, not read later, and counted as skipped', async () => {
    const skippedBefore = h.bot.context.autoRead.droppedCount(guildId);
    const before = standardRequests(h.emulator).length;
    await h.discord.setVoiceState(alice.id, guildId, DEFAULT_IDS.voice, { selfDeaf: true });
    await vi.waitUntil(() => h.bot.client.guilds.cache.get(guildId)?.voiceStates.cache.get(alice.id)?.selfDeaf, {
      timeout: 5_000,
      message: 'the deafen',
    });
    await h.discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content: '聞こえない発言' });
    await h.discord.setVoiceState(alice.id, guildId, DEFAULT_IDS.voice, { selfDeaf: false });
    await vi.waitUntil(() => h.bot.client.guilds.cache.get(guildId)?.voiceStates.cache.get(alice.id)?.selfDeaf === false, {
      timeout: 5_000,
      message: 'the undeafen',
    });
    await h.discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content: '聞こえる発言' });
    await vi.waitUntil(() => requested('聞こえる発言', before), { timeout: 20_000, message: 'the heard message' });
    expect(requested('聞こえない発言', before)).toBe(false);
    expect(h.bot.context.autoRead.droppedCount(guildId)).toBe(skippedBefore + 1);
  });

  it('moved by someone to another channel: the voice chat there is read, and with nobody there the bot leaves', async () => {
    await h.discord.setVoiceState(bob.id, guildId, VOICE_2);
    await h.discord.setVoiceState(h.discord.botUser.id, guildId, VOICE_2);
    await vi.waitUntil(() => h.bot.context.voice.sessions(guildId)[0]?.channelId === VOICE_2, {
      timeout: 5_000,
      message: 'the session to follow',
    });
    const before = standardRequests(h.emulator).length;
    await h.discord.sendMessage({ channelId: VOICE_2, author: bob, content: '移動先のチャット' });
    await vi.waitUntil(() => requested('移動先のチャット', before), { timeout: 20_000, message: 'the new voice chat read' });
    const leaving = h.discord.waitForBotVoiceState((s) => s.channelId === null, 20_000);
    await h.discord.setVoiceState(bob.id, guildId, null); // alice is still in the first channel: not a listener here
    await leaving;
    expect(h.bot.context.voice.sessions(guildId).length > 0).toBe(false);
  });

  it('kicked (4014): says once in the bound channel that reading stopped and how to resume', async () => {
    await join();
    // The guild reads in Japanese (its locale), so the notice is in Japanese.
    const disconnected = t('ja', 'voice.disconnected');
    const notice = h.discord.waitForMessage((m) => m.channelId === DEFAULT_IDS.general && m.content === disconnected, 20_000);
    voice.closeConnection(guildId, 4014);
    expect((await notice).content).toContain('/参加'); // /join, as a Japanese client shows it
    await vi.waitUntil(() => h.bot.context.voice.sessions(guildId).length === 0, { timeout: 20_000, message: 'session cleanup' });
    const before = standardRequests(h.emulator).length;
    await h.discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content: '切断のあとの発言' });
    // Once, not per message: a later /join is answered and nothing else was posted or requested.
    await join();
    expect(h.discord.messages.filter((m) => m.channelId === DEFAULT_IDS.general && m.content === disconnected)).toHaveLength(1);
    expect(requested('切断のあとの発言', before)).toBe(false);
  });

  it("Connect taken away, then Discord drops the call (4006): the bot does not go back in, and says once why, in the server's language", async () => {
    if (h.bot.context.voice.sessions(guildId).length === 0) await join();
    const voiceChannel = h.discord.guilds[0]!.channels.find((c) => c.id === DEFAULT_IDS.voice)!;
    const before = voiceChannel.permissionOverwrites ?? [];
    const noConnect = {
      id: DEFAULT_IDS.bot,
      type: 1 as const,
      allow: String(PERMISSIONS.SetVoiceChannelStatus),
      deny: String(PERMISSIONS.Connect),
    };
    await h.discord.setChannelOverwrites(DEFAULT_IDS.voice, [noConnect]);
    const me = () => h.bot.client.guilds.cache.get(guildId)!.members.me!;
    await vi.waitUntil(
      () => !h.bot.client.channels.cache.get(DEFAULT_IDS.voice)?.isVoiceBased() || !me().permissionsIn(DEFAULT_IDS.voice).has('Connect'),
      {
        timeout: 5_000,
        message: 'the bot to see Connect gone',
      },
    );
    const said = t('ja', 'voice.ended_no_connect', { voice: `<#${DEFAULT_IDS.voice}>` });
    const notice = h.discord.waitForMessage((m) => m.channelId === DEFAULT_IDS.general && m.content === said, 20_000);
    const asked = h.discord.botVoiceStates.length;
    voice.closeConnection(guildId, 4006);
    await notice;
    await vi.waitUntil(() => h.bot.context.voice.sessions(guildId).length === 0, { timeout: 10_000, message: 'the session to end' });
    // It left and did not sign in again: the only op 4 after the drop is the leave.
    await vi.waitUntil(() => h.discord.botVoiceStates.length > asked, { timeout: 10_000, message: 'the leave' });
    expect(h.discord.botVoiceStates.slice(asked).map((s) => s.channelId)).toEqual([null]);
    // Once: with Connect back, a /join is answered and nothing more was said.
    await h.discord.setChannelOverwrites(DEFAULT_IDS.voice, before);
    await vi.waitUntil(() => me().permissionsIn(DEFAULT_IDS.voice).has('Connect'), { timeout: 5_000, message: 'Connect back' });
    await join();
    expect(h.discord.messages.filter((m) => m.content === said)).toHaveLength(1);
  });
});

describe('restart', () => {
  it('queued messages nobody can hear any more after a restart are told once in the channel and dropped, not retried', async () => {
    if (h.bot.context.voice.sessions(guildId).length === 0) await join();
    h.emulator.setLatency('standard', 3_000);
    const lines = ['再起動で一つ目', '再起動で二つ目', '再起動で三つ目'];
    for (const content of lines) await h.discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content });
    await vi.waitUntil(
      () => {
        const s = guildStats(h.bot.scheduler, guildId);
        return s.queued + s.synthesizing === 3 ? true : undefined;
      },
      { timeout: 10_000, message: 'three accepted' },
    );
    // The first message is on its way to the service when the bot stops; count from there.
    await vi.waitUntil(() => requested(lines[0]!), { timeout: 10_000, message: 'the first request at the service' });
    let before = 0;
    // Nobody is left in voice while the bot is down.
    await h.restart(undefined, async () => {
      before = standardRequests(h.emulator).length;
      h.emulator.setLatency('standard', 0);
      await h.discord.setVoiceState(alice.id, guildId, null);
    });
    const expected = t('ja', 'restart.not_read', { count: 3 });
    const notice = await vi.waitUntil(() => h.discord.messages.find((m) => m.channelId === DEFAULT_IDS.general && m.content === expected), {
      timeout: 10_000,
      message: 'the notice',
    });
    expect(h.bot.context.voice.sessions(guildId).length > 0).toBe(false);
    // Dropped, not retried: another restart says nothing more and requests nothing.
    await h.restart();
    // The restart is over (start() returns once what was accepted is queued again or told), and
    // nothing was queued again: the queue is idle, so nothing can be requested later.
    const idle = guildStats(h.bot.scheduler, guildId);
    expect(idle.queued + idle.synthesizing + idle.ready).toBe(0);
    expect(h.discord.messages.filter((m) => m.channelId === DEFAULT_IDS.general && m.content === notice.content)).toHaveLength(1);
    expect(lines.some((l) => requested(l, before))).toBe(false);
  });
});

describe('the voice channel status', () => {
  const channel = (id: string) => h.discord.guilds[0]!.channels.find((c) => c.id === id)!;
  async function run(name: string): Promise<string> {
    const interaction = await h.discord.sendInteraction({ channelId: DEFAULT_IDS.chat, user: alice, name, locale: 'en-US' });
    const reply = await interaction.waitForResponse((r) => r.kind === 'editOriginal' || (r.kind === 'callback' && r.type === 4), 30_000);
    return String(reply.data?.content ?? '');
  }

  it('shows which text channel is read, in the server language, and is cleared on /leave', async () => {
    // As in a call with no client of alice's in it: the quick joins and leaves below carry no DAVE group.
    for (const listener of voice.dave.listeners(guildId)) voice.dave.detachListener(listener);
    await h.discord.setVoiceState(alice.id, guildId, DEFAULT_IDS.voice);
    expect(await run('join')).toContain('Joined');
    await vi.waitFor(() => expect(channel(DEFAULT_IDS.voice).status).toBe('📖 #chat を読み上げ中'), { timeout: 10_000 });
    expect(await run('leave')).toContain('Left');
    await vi.waitFor(() => expect(channel(DEFAULT_IDS.voice).status ?? null).toBeNull(), { timeout: 10_000 });
    expect(h.discord.guilds[0]!.voiceStates.some((v) => v.userId === DEFAULT_IDS.bot)).toBe(false);
  });

  it('without Set Voice Channel Status: joins and leaves as usual, sends no status and warns about nothing', async () => {
    await h.discord.setVoiceState(alice.id, guildId, PLAIN_VOICE);
    const warnsBefore = logs.filter((l) => l.level >= 40).length;
    expect(await run('join')).toContain('Joined');
    expect(await run('leave')).toContain('Left');
    expect(h.discord.requests.some((r) => r.path === `/channels/${PLAIN_VOICE}/voice-status`)).toBe(false);
    expect(channel(PLAIN_VOICE).status ?? null).toBeNull();
    expect(logs.filter((l) => l.level >= 40).slice(warnsBefore)).toEqual([]);
  });
});

describe('the voice channel deleted', () => {
  it("while the bot reads it: the session ends, the channel it read is told once in the server's language, and nothing rejoins", async () => {
    const bob = { id: DEFAULT_IDS.bob, username: 'bob' };
    if (h.bot.context.voice.sessions(guildId).length > 0) {
      const leave = await h.discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: alice, name: 'leave', locale: 'en-US' });
      await leave.waitForResponse((r) => r.kind === 'callback', 10_000);
    }
    await h.discord.setVoiceState(bob.id, guildId, VOICE_2);
    const joined = await h.discord.sendInteraction({ channelId: DEFAULT_IDS.chat, user: bob, name: 'join', locale: 'en-US' });
    expect(String((await joined.waitForResponse((r) => r.kind === 'editOriginal', 30_000)).data?.content)).toContain('Joined');
    const said = t('ja', 'voice.ended_channel_deleted');
    const notice = h.discord.waitForMessage((m) => m.channelId === DEFAULT_IDS.chat && m.content === said, 20_000);
    const asked = h.discord.botVoiceStates.length;
    await h.discord.deleteChannel(VOICE_2);
    await notice;
    await vi.waitUntil(() => h.bot.context.voice.sessions(guildId).length === 0, { timeout: 10_000, message: 'the session to end' });
    // A later command is answered, and by then nothing more was said nor joined.
    const after = await h.discord.sendInteraction({ channelId: DEFAULT_IDS.chat, user: bob, name: 'leave', locale: 'en-US' });
    await after.waitForResponse((r) => r.kind === 'callback', 10_000);
    expect(h.discord.messages.filter((m) => m.content === said)).toHaveLength(1);
    expect(h.discord.botVoiceStates.slice(asked).filter((s) => s.channelId !== null)).toEqual([]);
  });
});
