import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DiscordGatewayAdapterCreator } from '@discordjs/voice';
import { createLogger } from '../../src/util/log.ts';
import type { VoiceSessionState } from '../../src/voice/session.ts';

// The voice worker pool with real worker threads; the worker_threads module is wrapped only to
// keep each Worker it starts, so a test can end one as a crash would. The gateway adapter takes
// every payload and never answers (no voice server here): the sessions stay connecting.
const started = vi.hoisted(() => [] as { terminate(): Promise<number>; threadId: number }[]);
vi.mock('node:worker_threads', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:worker_threads')>();
  class KeptWorker extends actual.Worker {
    constructor(...args: ConstructorParameters<typeof actual.Worker>) {
      super(...args);
      started.push(this);
    }
  }
  return { ...actual, Worker: KeptWorker };
});
// Test files share a module registry (isolate: false): load the pool afresh, so it sees the wrapped module.
vi.resetModules();
const { VoiceWorkerPool } = await import('../../src/voice/worker-pool.ts');

const logs: { level: number; msg: string; code?: number; sessions?: number }[] = [];
const logger = createLogger({
  level: 'info',
  destination: { write: (line: string) => void logs.push(JSON.parse(line) as (typeof logs)[number]) },
});
const payloads: unknown[] = [];
const adapterCreator: DiscordGatewayAdapterCreator = () => ({ sendPayload: (p) => (payloads.push(p), true), destroy() {} });
const open = (pool: InstanceType<typeof VoiceWorkerPool>, guildId: string) =>
  pool.open({ guildId, channelId: `${guildId}9`, textChannelId: null, adapterCreator });

let pool: InstanceType<typeof VoiceWorkerPool> | undefined;
afterEach(async () => {
  await pool?.close();
  started.length = 0;
  logs.length = 0;
  payloads.length = 0;
});

describe('voice worker threads', () => {
  it('GIVEN two workers THEN sessions are spread over both; their op 4 joins reach the main gateway through the adapter', async () => {
    pool = new VoiceWorkerPool({ size: 2, logger });
    open(pool, '101');
    open(pool, '102');
    open(pool, '103');
    expect(started).toHaveLength(2);
    await vi.waitFor(() => expect(payloads).toHaveLength(3), { timeout: 10_000 });
    expect(payloads.map((p) => (p as { d: { guild_id: string } }).d.guild_id).sort()).toEqual(['101', '102', '103']);
  });

  it('GIVEN a worker that stops THEN a new one is started at once and its session signals its channel again through the same adapter, reconnecting meanwhile', async () => {
    pool = new VoiceWorkerPool({ size: 1, logger });
    const session = open(pool, '201');
    await vi.waitFor(() => expect(payloads).toHaveLength(1), { timeout: 10_000 });
    await started[0]!.terminate();
    expect(started).toHaveLength(2);
    expect(session.state).toEqual({ status: 'reconnecting', attempt: 1 });
    await vi.waitFor(() => expect(payloads).toHaveLength(2), { timeout: 10_000 });
    expect(payloads[1]).toMatchObject({ op: 4, d: { guild_id: '201', channel_id: '2019' } });
    expect(logs.find((l) => l.msg === 'voice worker stopped; rejoining its calls from a new one')).toMatchObject({
      level: 50,
      sessions: 1,
    });
  });

  it('GIVEN a worker that keeps stopping THEN each restart waits twice as long as the one before, and after maxRestarts in a row its sessions end ("voice worker stopped")', async () => {
    pool = new VoiceWorkerPool({ size: 1, logger, restartBackoffMs: 200, maxRestarts: 3 });
    const session = open(pool, '202');
    const ended = new Promise<VoiceSessionState>((resolve) =>
      session.on('stateChange', (_old, next) => next.status === 'destroyed' && resolve(next)),
    );
    const startedAt: number[] = [];
    for (let i = 0; i < 4; i++) {
      await vi.waitFor(() => expect(started).toHaveLength(i + 1), { timeout: 10_000 });
      startedAt.push(performance.now());
      await vi.waitFor(() => expect(payloads).toHaveLength(i + 1), { timeout: 10_000 });
      await started[i]!.terminate();
    }
    expect(await ended).toEqual({ status: 'destroyed', reason: 'voice worker stopped' });
    expect(started).toHaveLength(4);
    // Restarted at once, then 200 ms and 400 ms after the stop (which follows each start within moments).
    expect(startedAt[2]! - startedAt[1]!).toBeGreaterThanOrEqual(200);
    expect(startedAt[3]! - startedAt[2]!).toBeGreaterThanOrEqual(400);
    expect(logs.find((l) => l.msg === 'voice worker stopped; its voice sessions end')).toMatchObject({ level: 50, sessions: 1 });
    // A session opened later gets a worker of its own.
    open(pool, '203');
    expect(started).toHaveLength(5);
  });

  it('GIVEN a session the worker itself gives up on (no voice server within the join timeout) THEN the bot leaves the channel and the adapter is freed', async () => {
    pool = new VoiceWorkerPool({ size: 1, logger });
    let destroyed = 0;
    const session = pool.open({
      guildId: '301',
      channelId: '3019',
      textChannelId: null,
      readyTimeoutMs: 300,
      adapterCreator: () => ({ sendPayload: (p) => (payloads.push(p), true), destroy: () => void destroyed++ }),
    });
    await expect(session.ready()).rejects.toThrow();
    expect(session.state).toMatchObject({ status: 'destroyed', reason: 'join_timeout' });
    // The op 4 the worker's connection sends as it gives up reaches Discord: the bot is not left sitting in the channel.
    await vi.waitFor(() => expect(payloads.at(-1)).toMatchObject({ op: 4, d: { guild_id: '301', channel_id: null } }), { timeout: 5_000 });
    expect(destroyed).toBe(1);
  });

  it("GIVEN two workers THEN each answers how its packet clock kept time (the benchmark's trace, asked, never printed by the bot): nothing traced while nothing plays", async () => {
    pool = new VoiceWorkerPool({ size: 2, logger });
    open(pool, '401');
    open(pool, '402');
    await vi.waitFor(() => expect(payloads).toHaveLength(2), { timeout: 10_000 });
    const traces = await pool.clockTraces();
    expect(traces.map((t) => t.thread).sort()).toEqual(started.map((w) => w.threadId).sort());
    for (const t of traces) expect(t).toMatchObject({ trace: undefined, caughtUp: 0, restarts: 0, gc: { pauses: expect.any(Number) } });
  });
});
