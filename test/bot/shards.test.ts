import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { DEFAULT_IDS, guildOnShard, startFakeDiscord, type FakeDiscord, type FakeGuild } from '@yomiage/local-discord';
import { startFakeVoiceServer, type FakeVoiceServer } from '@yomiage/local-discord';
import { RATE_LIMITS } from '../../src/tts/limiter/limiter.ts';
import { standardRequests } from '../support/bot-harness.ts';
import { startChildBot, type ChildBot, type LogLine, pendingRows } from '../support/child-bot.ts';
import { getText, value } from '../support/ops.ts';
import { approveAtLocalDiscord, DashboardClient } from '../support/dashboard-client.ts';

// Shards and shard processes, end to end through `npm start` as a child process: the local Discord recommends
// 2 shards (SHARD_COUNT=auto) and routes guilds by Discord's formula; SHARD_PROCESSES=2 makes
// `npm start` a shard manager running one bot process per shard, sharing one DATA_DIR. Both
// processes speak, the service never sees more than its window, and a process killed with
// queued speech is started again and speaks it. The manager serves METRICS_PORT:
// the sum over its processes, the shared rate window by max, /readyz over every process.
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
// Voice guilds (A on shard 0, B on shard 1), and two more for the /say burst (C on 0, D on 1).
const [A, B, C, D] = [guildOnShard(0, 2, 0), guildOnShard(1, 2, 0), guildOnShard(0, 2, 1), guildOnShard(1, 2, 1)] as [
  FakeGuild,
  FakeGuild,
  FakeGuild,
  FakeGuild,
];
const channel = (g: FakeGuild, name: string) => g.channels.find((c) => c.name === name)!.id;

let emulator: Emulator;
let discord: FakeDiscord;
let voice: FakeVoiceServer;
let dataDir: string;
let manager: ChildBot;

const ready = (): Array<LogLine & { shards: number[]; guilds: number; pid: number; restored: number }> =>
  manager.logs.filter((l) => l.msg === 'bot ready') as never;
const readyOf = (shard: number) => ready().filter((l) => l.shards.includes(shard));

beforeAll(async () => {
  voice = await startFakeVoiceServer();
  [emulator, discord] = await Promise.all([
    startEmulator({ control: true }),
    startFakeDiscord({ shardCount: 2, guilds: [A, B, C, D], voiceEndpoint: () => voice.endpoint }),
  ]);
  dataDir = mkdtempSync(join(tmpdir(), 'yomiage-shards-'));
  manager = await startChildBot({
    discord,
    emulator,
    dataDir,
    caCertPem: voice.caCertPem,
    readyMessage: null,
    env: {
      SHARD_COUNT: 'auto',
      SHARD_PROCESSES: '2',
      AUTO_READ_MAX_AGE_SECONDS: '600',
      METRICS_PORT: '0',
      DASHBOARD_PORT: '0',
      DISCORD_CLIENT_SECRET: discord.bots[0]!.clientSecret,
    },
  });
  await vi.waitFor(() => expect(ready()).toHaveLength(2), { timeout: 45_000, interval: 100 });
}, 60_000);
afterAll(async () => {
  await manager?.stop('SIGKILL');
  for (const l of ready()) {
    try {
      process.kill(l.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await Promise.all([emulator?.close(), discord?.close(), voice?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('npm start with SHARD_COUNT=auto and SHARD_PROCESSES=2', () => {
  it('runs one bot process per shard, each with the guilds the formula gives its shard', () => {
    const [zero, one] = [readyOf(0)[0]!, readyOf(1)[0]!];
    expect(zero.shards).toEqual([0]);
    expect(one.shards).toEqual([1]);
    expect([zero.guilds, one.guilds]).toEqual([2, 2]);
    expect(new Set([zero.pid, one.pid, manager.pid]).size).toBe(3);
    expect(discord.identifies.map((i) => i.shard).sort()).toEqual([
      [0, 2],
      [1, 2],
    ]);
  });

  it('both processes speak: a message in a guild of each shard is heard in its voice channel', { timeout: 60_000 }, async () => {
    for (const g of [A, B]) {
      await discord.setVoiceState(alice.id, g.id, channel(g, 'Voice'));
      voice.simulateListener({ guildId: g.id, channelId: channel(g, 'Voice'), userId: alice.id });
      const joined = await discord.sendInteraction({ channelId: channel(g, 'general'), user: alice, name: 'join', locale: 'en-US' });
      expect(String((await joined.waitForResponse((r) => r.kind === 'editOriginal', 30_000)).data?.content)).toContain('Joined');
    }
    await Promise.all([A, B].map((g) => voice.waitForDave(g.id)));
    const started = performance.now();
    await discord.sendMessage({ channelId: channel(A, 'general'), author: alice, content: 'シャードゼロです' });
    await discord.sendMessage({ channelId: channel(B, 'general'), author: alice, content: 'シャードイチです' });
    for (const g of [A, B]) {
      const heard = await voice.waitForAudio({ guildId: g.id, startedAfter: started, minDurationMs: 200, timeoutMs: 20_000 });
      expect(heard.rmsDb).toBeGreaterThan(-40);
    }
  });

  it("the manager's METRICS_PORT serves the sum over both processes, and /readyz over both", { timeout: 30_000 }, async () => {
    const listening = manager.logs.filter((l) => l.msg === 'metrics and health checks listening');
    // Only the manager listens; its processes answer it over IPC.
    expect(listening).toHaveLength(1);
    expect(listening[0]!.shardProcess).toBeUndefined();
    const base = String(listening[0]!.url);
    // One message spoken by each process (counted once its clip ended), one request each, one voice session each.
    const text = await vi.waitUntil(
      async () => {
        const body = (await getText(`${base}/metrics`)).body;
        return value(body, 'yomiage_speech_messages_total', { outcome: 'spoken' }) >= 2 ? body : undefined;
      },
      { timeout: 20_000, interval: 50, message: 'both messages counted' },
    );
    expect(value(text, 'yomiage_speech_messages_total', { outcome: 'spoken' })).toBe(2);
    expect(value(text, 'yomiage_tts_requests_total', { endpoint: 'standard', status: '200' })).toBe(standardRequests(emulator).length);
    expect(value(text, 'yomiage_voice_sessions')).toBe(2);
    expect(value(text, 'yomiage_speech_wait_seconds_count')).toBe(2);
    // Both processes read the one shared window: the manager takes the max, not the sum.
    expect(value(text, 'yomiage_rate_window_used', { endpoint: 'standard' })).toBe(standardRequests(emulator).length);
    expect(value(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    const readyz = await getText(`${base}/readyz`);
    expect(readyz.status).toBe(200);
    expect(JSON.parse(readyz.body)).toEqual({
      status: 'ready',
      degraded: [],
      checks: { process_0: { ok: true }, process_1: { ok: true } },
    });
    expect((await getText(`${base}/healthz`)).status).toBe(200);
  });

  it(
    'one process serves the dashboard for both: the guilds of each shard, a setting the other process reads at once',
    { timeout: 30_000 },
    async () => {
      const listening = manager.logs.filter((l) => l.msg === 'dashboard listening');
      expect(listening).toHaveLength(1);
      const url = String(listening[0]!.url);
      discord.bots[0]!.redirectUris.push(`${url}/auth/callback`);
      const admin = new DashboardClient(url);
      await admin.signIn((authorize) => approveAtLocalDiscord(authorize, DEFAULT_IDS.bob));
      const guilds = (await admin.api('GET', '/guilds')).body as { id: string; manager: boolean }[];
      expect(guilds.map((g) => [g.id, g.manager]).sort()).toEqual([A, B, C, D].map((g) => [g.id, true]).sort());
      expect((await admin.api('PATCH', `/guilds/${D.id}/settings`, { ignorePrefix: '!!' })).status).toBe(200);
      // Process 1 holds D: its /config show reads what the dashboard saved, at once (no speech: the window is the burst's).
      const shown = await discord.sendInteraction({
        channelId: channel(D, 'general'),
        user: { id: DEFAULT_IDS.bob, username: 'bob' },
        name: 'config',
        locale: 'en-US',
        options: [{ name: 'show', type: 1, options: [] }] as never,
      });
      expect(String((await shown.waitForResponse((r) => r.kind === 'callback', 15_000)).data?.content)).toContain('Ignore prefix: `!!`');
    },
  );

  it('kill -9 of the process of shard 1 with speech queued: it is started again and speaks all of it', { timeout: 90_000 }, async () => {
    const texts = ['再起動一', '再起動二', '再起動三'];
    emulator.setLatency('standard', 3_000);
    for (const content of texts) await discord.sendMessage({ channelId: channel(B, 'general'), author: alice, content });
    await vi.waitFor(() => expect(pendingRows(dataDir, B.id)).toBe(texts.length), { timeout: 20_000 });
    const victim = readyOf(1)[0]!.pid;
    process.kill(victim, 'SIGKILL');
    await manager.waitForLog(
      (l) => l.msg === 'shard process exited; restarting it' && l.signal === 'SIGKILL',
      10_000,
      'the manager seeing the death',
    );
    emulator.setLatency('standard', 0);
    const since = { requests: standardRequests(emulator).length, at: performance.now() };
    await vi.waitFor(() => expect(readyOf(1)).toHaveLength(2), { timeout: 30_000, interval: 100 });
    const again = readyOf(1)[1]!;
    expect(again.pid).not.toBe(victim);
    expect(again.restored).toBe(texts.length);
    // Shard 0's process was never touched.
    expect(readyOf(0)).toHaveLength(1);
    await vi.waitFor(
      () => {
        const sent = standardRequests(emulator)
          .slice(since.requests)
          .map((r) => r.text);
        expect(texts.every((t) => sent.some((s) => s.includes(t)))).toBe(true);
      },
      { timeout: 30_000 },
    );
    await vi.waitFor(() => expect(pendingRows(dataDir, B.id)).toBe(0), { timeout: 30_000 });
    // Heard: the last clip ends at the voice server (speaking off) a moment after its delivery settled.
    await vi.waitFor(() => expect(voice.utterances(B.id).filter((u) => u.start >= since.at && u.complete).length).toBeGreaterThan(0), {
      timeout: 5_000,
    });
  });

  it(
    'a /say burst from both shards beyond the window: the service never sees more than it allows, and no 429',
    { timeout: 90_000 },
    async () => {
      const { limit, windowMs } = RATE_LIMITS.standard;
      const perGuild = 18; // 36 requests wanted, more than the 30 a window allows
      const asked = await Promise.all(
        [C, D].flatMap((g) =>
          Array.from({ length: perGuild }, (_, i) =>
            discord.sendInteraction({
              channelId: channel(g, 'general'),
              user: alice,
              name: 'say',
              locale: 'en-US',
              options: [{ name: 'text', type: 3, value: `窓${g === C ? 'C' : 'D'}${i}` }],
            }),
          ),
        ),
      );
      const seen = () => emulator.requests().filter((r) => r.target === 'standard');
      const before = seen().length;
      const inWindowAt = (t: number) => seen().filter((r) => r.at > t - windowMs && r.at <= t).length;
      // Requests stop arriving while /say are still waiting, because both processes hold theirs back
      // (they look again every second), counted as the limiter counts it: each grant occupies its
      // slot for the window plus a 1 s safety margin.
      const answered = () => asked.filter((i) => i.responses().some((r) => r.files.length > 0));
      // Paced, not just slow: on a loaded machine two requests of the burst can be 2.5 s apart, so the
      // pause counts once the limiter itself has given half the window (the manager's gauge, below).
      const base = String(manager.logs.find((l) => l.msg === 'metrics and health checks listening')!.url);
      const windowUsed = async () => value((await getText(`${base}/metrics`)).body, 'yomiage_rate_window_used', { endpoint: 'standard' });
      let last = -1;
      let stableSince = Date.now();
      await vi.waitFor(
        async () => {
          const n = seen().length;
          if (n !== last) [last, stableSince] = [n, Date.now()];
          expect(Date.now() - stableSince).toBeGreaterThanOrEqual(2_500);
          expect(await windowUsed()).toBeGreaterThanOrEqual(limit / 2);
        },
        { timeout: 60_000, interval: 100 },
      );
      const now = Date.now();
      // Half the window goes at once; past it the slots are spread over the window (pacing), so
      // requests pause while /say still wait with the window only partly spent. "Half" counts what the
      // window held when the burst began (the previous test's requests too, as the limiter counts
      // them), so it is measured from the burst's first request, not from now: a request of the
      // previous test can leave the window between the two. The previous test killed a process with
      // -9 while it spoke: a grant it held for a request it had not sent yet still counts in the shared
      // window (no process can know it was never sent), so the service may have seen up to the
      // grants one audience holds at a time (maxInFlight, 1) fewer; the limiter's own count, the
      // gauge below, must reach half exactly.
      const burstAt = seen()[before]!.at;
      const atBurst = seen().filter((r) => r.at > burstAt - windowMs - 1_000).length;
      expect(atBurst).toBeGreaterThanOrEqual(limit / 2 - 1);
      expect(seen().filter((r) => r.at > now - windowMs - 1_000).length).toBeLessThanOrEqual(limit);
      expect(answered().length).toBeLessThan(asked.length);
      for (const g of [C, D])
        expect(answered().some((i) => i.responses().some((r) => r.files.length > 0 && r.message?.guildId === g.id))).toBe(true);
      expect(seen().filter((r) => r.status === 429)).toEqual([]);
      for (const r of seen()) expect(inWindowAt(r.at)).toBeLessThanOrEqual(limit);
      // The manager's gauge of the shared window: the max over processes (a sum would be twice the limit).
      const used = await windowUsed();
      expect(used).toBeGreaterThanOrEqual(limit / 2); // half at once, the rest paced
      expect(used).toBeLessThanOrEqual(limit);
    },
  );

  it('SIGTERM to the manager stops every bot process, then the manager', async () => {
    const pids = [readyOf(0).at(-1)!.pid, readyOf(1).at(-1)!.pid];
    expect(await manager.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
    expect(manager.logs.filter((l) => l.msg === 'bot stopped')).toHaveLength(2);
  });
});
