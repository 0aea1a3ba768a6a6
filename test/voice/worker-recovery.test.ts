import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startFakeVoiceServer, trustCertificate, type FakeVoiceServer } from '@yomiage/local-discord';
import { LISTENER_USER_ID, loopbackAdapter, makeSineFiles, type AdapterLog } from '@yomiage/local-discord/test/voice/helpers';
import { createLogger } from '../../src/util/log.ts';
import type { VoiceRecovery, VoiceSession } from '../../src/voice/session.ts';
import { VoiceWorkerPool } from '../../src/voice/worker-pool.ts';
import type { VoiceWorkerFault } from '../../src/voice/worker-protocol.ts';

// Voice workers failing mid-clip, with real threads, the real @discordjs/voice in them and the
// local voice server hearing the call through a listener's DAVE keys. The gateway adapter plays the
// main gateway (loopbackAdapter): each op 4 join is answered with the voice server's endpoint. The
// faults are the ones a test injects through the worker protocol (YOMIAGE_TEST_VOICE_FAULTS in a
// bot): a crash, a hang, a stray rejection, and players that stop sending.
const CLIP_MS = 1_000;

let voice: FakeVoiceServer;
let dir: string;
let ogg: string;
let pool: VoiceWorkerPool | undefined;
let logs: { level: number; msg: string }[];
let guildSeq = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'voice-recovery-'));
  [voice, { ogg }] = await Promise.all([startFakeVoiceServer(), makeSineFiles(dir)]);
  // Before the pool starts a worker: each worker trusts what this thread trusts.
  trustCertificate(voice.caCertPem);
}, 30_000);
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});
afterAll(async () => {
  await voice?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A pool quick to notice a hung or silent worker, and a session in a call with a listener, Ready and in the DAVE group. */
async function inCall(): Promise<{ session: VoiceSession; guildId: string; joins: AdapterLog['joins']; recovered: VoiceRecovery[] }> {
  logs = [];
  const logger = createLogger({
    level: 'info',
    destination: { write: (line: string) => void logs.push(JSON.parse(line) as (typeof logs)[number]) },
  });
  pool = new VoiceWorkerPool({ size: 1, logger, pingEveryMs: 100, hangAfterMs: 800, stallAfterMs: 1_000 });
  const guildId = `40000000000000000${++guildSeq}`;
  voice.simulateListener({ guildId, channelId: `${guildId}9`, userId: LISTENER_USER_ID });
  const log: AdapterLog = { joins: [] };
  const session = pool.open({
    guildId,
    channelId: `${guildId}9`,
    textChannelId: null,
    adapterCreator: loopbackAdapter(voice, guildId, log),
  });
  const recovered: VoiceRecovery[] = [];
  session.on('recovered', (r) => recovered.push(r));
  await session.ready();
  await voice.waitForDave(guildId);
  return { session, guildId, joins: log.joins, recovered };
}

/** Plays the 1 s clip and, after about 0.3 s of it was heard, makes the worker fail as `fault` says; resolves when play settles. */
async function faultMidClip(session: VoiceSession, guildId: string, fault: VoiceWorkerFault): Promise<void> {
  const playing = session.play({ oggPath: ogg, durationMs: CLIP_MS }, new AbortController().signal);
  let heard = 0;
  await voice.waitForEvent('packet', (p) => p.guildId === guildId && !p.silent && ++heard >= 15, 10_000);
  expect(pool!.injectFault(fault)).toBe(1);
  await playing;
}

/** Sound heard in the guild, by voice session (ssrc), in ms of decoded audio. */
function heardBySession(guildId: string): number[] {
  const bySsrc = Map.groupBy(
    voice.packets.filter((p) => p.guildId === guildId && !p.silent),
    (p) => p.ssrc,
  );
  return [...bySsrc.values()].map((packets) => packets.length * 20);
}

/** Every sound frame of the guild's call was end-to-end encrypted and the listener decrypted it. */
function expectAllDecrypted(guildId: string): void {
  const sound = voice.packets.filter((p) => p.guildId === guildId && !p.silent);
  expect(sound.filter((p) => !p.daveFramed || p.heardBy[LISTENER_USER_ID] !== 'decrypted')).toEqual([]);
}

describe('a voice worker that fails mid-clip', () => {
  it.each([
    ['crash', 'worker_crash'],
    ['hang', 'worker_hang'],
  ] as const)(
    'GIVEN a worker %s while a clip plays THEN a new worker rejoins the call (the bot never leaves), the clip is heard again whole from its start, and play settles once',
    async (fault, cause) => {
      const { session, guildId, joins, recovered } = await inCall();
      await faultMidClip(session, guildId, fault);

      // Two voice sessions: the cut one, then the new worker's, which carried the whole clip.
      const [cut, whole, ...more] = heardBySession(guildId);
      expect(more).toEqual([]);
      expect(cut).toBeLessThan(CLIP_MS - 200);
      expect(Math.abs(whole! - CLIP_MS)).toBeLessThanOrEqual(60);
      expectAllDecrypted(guildId);
      expect(session.state).toEqual({ status: 'ready' });
      expect(recovered).toEqual([{ guildId, cause }]);
      // Signalled twice, never left: members saw no leave and join.
      expect(joins.map((j) => j.channel_id)).toEqual([`${guildId}9`, `${guildId}9`]);
      const replaced = logs.find(
        (l) =>
          l.msg ===
          (fault === 'hang' ? 'voice worker stopped answering; replacing it' : 'voice worker stopped; rejoining its calls from a new one'),
      );
      expect(replaced?.level).toBe(50);
    },
  );

  it('GIVEN a stray rejection in the worker (a promise nobody awaited) THEN the thread goes on: the clip plays to its end in the same call, nothing recovered', async () => {
    const { session, guildId, joins, recovered } = await inCall();
    await faultMidClip(session, guildId, 'reject');
    const [whole, ...more] = heardBySession(guildId);
    expect(more).toEqual([]);
    expect(Math.abs(whole! - CLIP_MS)).toBeLessThanOrEqual(60);
    expect(recovered).toEqual([]);
    expect(joins).toHaveLength(1);
    await vi.waitFor(() => expect(logs.some((l) => l.msg === 'unhandled rejection in a voice worker; its calls go on')).toBe(true));
  });

  it('GIVEN a call that goes silent while its clip plays (the thread answers, no packet goes out) THEN the watchdog rejoins it in the same worker and the clip is heard again whole', async () => {
    const { session, guildId, joins, recovered } = await inCall();
    await faultMidClip(session, guildId, 'silence');
    const [cut, whole, ...more] = heardBySession(guildId);
    expect(more).toEqual([]);
    expect(cut).toBeLessThan(CLIP_MS - 200);
    expect(Math.abs(whole! - CLIP_MS)).toBeLessThanOrEqual(60);
    expectAllDecrypted(guildId);
    expect(recovered).toEqual([{ guildId, cause: 'stall' }]);
    expect(joins.map((j) => j.channel_id)).toEqual([`${guildId}9`, `${guildId}9`]);
    expect(logs.some((l) => l.msg === 'voice call silent while speech waits; rejoining it')).toBe(true);
  });
});
