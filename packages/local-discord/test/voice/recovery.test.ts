/**
 * What @discordjs/voice 0.19.2 does when the voice server closes the websocket with 4015, 4014 and
 * 4006. The bot's voice layer builds its recovery on these facts, so they are pinned here. The
 * calls run DAVE with a simulated listener: a resume keeps the group, a new session makes a new one.
 */
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import {
  createAudioPlayer,
  createAudioResource,
  entersState,
  StreamType,
  VoiceConnectionDisconnectReason,
  VoiceConnectionStatus,
  type AudioPlayer,
  type VoiceConnection,
} from '@discordjs/voice';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeVoiceServer, trustCertificate, type FakeVoiceServer, type VoiceSession } from '../../src/voice/server.ts';
import { join, LISTENER_USER_ID, makeSineFiles } from './helpers.ts';

let server: FakeVoiceServer;
let dir: string;
let files: { mp3: string; ogg: string };
const cleanups: (() => void)[] = [];

beforeAll(async () => {
  dir = await mkdtemp(joinPath(tmpdir(), 'voice-fake-'));
  [server, files] = await Promise.all([startFakeVoiceServer(), makeSineFiles(dir)]);
  trustCertificate(server.caCertPem);
});

afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function joinAndPlay(
  guildId: string,
): Promise<{ connection: VoiceConnection; statuses: string[]; joins: unknown[]; player: AudioPlayer; session: VoiceSession }> {
  const { connection, statuses, log } = join(server, guildId);
  const player = createAudioPlayer();
  player.on('error', () => {});
  cleanups.push(() => {
    player.stop(true);
    if (connection.state.status !== VoiceConnectionStatus.Destroyed) connection.destroy();
  });
  await entersState(connection, VoiceConnectionStatus.Ready, 20_000);
  await server.waitForDave(guildId);
  const session = server.sessions.find((s) => s.serverId === guildId)!;
  connection.subscribe(player);
  player.play(createAudioResource(createReadStream(files.ogg), { inputType: StreamType.OggOpus }));
  // Close mid-playback: after about 0.4 s of audio.
  let heard = 0;
  await server.waitForEvent('packet', (p) => p.ssrc === session.ssrc && !p.silent && ++heard >= 20);
  return { connection, statuses, joins: log.joins, player, session };
}

/** The last sound packets of `ssrc` were end-to-end encrypted and the listener decrypted them. */
function expectE2eeTail(ssrc: number): void {
  const tail = server.packets.filter((p) => p.ssrc === ssrc && !p.silent).slice(-10);
  expect(tail).toHaveLength(10);
  expect(tail.filter((p) => !p.daveFramed || p.heardBy[LISTENER_USER_ID] !== 'decrypted')).toEqual([]);
}

/** Audio heard in `guildId`, summed over its utterances. */
function totalAudioMs(guildId: string): number {
  return server.utterances(guildId).reduce((ms, u) => ms + u.durationMs, 0);
}

describe('voice websocket close codes with the real @discordjs/voice', () => {
  it('GIVEN playback WHEN the server closes with 4015 THEN the client resumes the same session and playback continues', async () => {
    const guildId = '300000000000000001';
    const { connection, statuses, joins, session } = await joinAndPlay(guildId);
    const resumed = server.waitForEvent('resume', (s) => s === session);
    const commitsBefore = server.dave.snapshot(guildId)!.epoch;
    const seqAtClose = session.seq;

    server.closeConnection(guildId, 4015);
    const [, { seqAck }] = await resumed;
    const resumedAt = performance.now();
    await server.waitForEvent('speaking', (s, { speaking }) => s === session && speaking === 0);

    expect(session.resumes).toBe(1);
    // Everything sent before the close (Ready, Session Description, the DAVE handshake) was acked.
    expect(seqAck).toBe(seqAtClose);
    // The DAVE group outlived the resume: same epoch, and the audio after it is still E2EE.
    expect(server.dave.snapshot(guildId)!.epoch).toBe(commitsBefore);
    expectE2eeTail(session.ssrc);
    expect(server.sessions.filter((s) => s.serverId === guildId)).toHaveLength(1);
    expect(session.closeCodes).toEqual([4015]);
    const after = server.packets.filter((p) => p.ssrc === session.ssrc && p.receivedAt > resumedAt && !p.silent);
    expect(after.length).toBeGreaterThan(10);
    // The player auto-pauses while the connection is not Ready, so no audio is lost, and the
    // resume is quick enough on loopback that it stays one utterance.
    const [utterance, ...more] = server.utterances(guildId);
    expect(more).toEqual([]);
    expect(utterance!.durationMs).toBeGreaterThan(900);
    expect(utterance!.durationMs).toBeLessThan(1100);
    expect(statuses).toEqual(['signalling', 'connecting', 'ready', 'connecting', 'ready']);
    expect(joins).toHaveLength(1); // no new op 4 to the main gateway
    expect(connection.state.status).toBe(VoiceConnectionStatus.Ready);
  });

  it('GIVEN a connection WHEN the server closes with 4014 THEN it goes Disconnected and only a rejoin brings it back', async () => {
    const guildId = '300000000000000002';
    const { connection, statuses, joins, session } = await joinAndPlay(guildId);

    server.closeConnection(guildId, 4014);
    await entersState(connection, VoiceConnectionStatus.Disconnected, 10_000);

    expect(connection.state).toMatchObject({ reason: VoiceConnectionDisconnectReason.WebSocketClose, closeCode: 4014 });
    expect(joins).toHaveLength(1); // the library itself sends nothing to the main gateway
    expect(session.resumable).toBe(false);
    expect(statuses).toEqual(['signalling', 'connecting', 'ready', 'disconnected']);

    // Recovery is the caller's job: rejoin() sends op 4 again and a new voice session follows.
    const identified = server.waitForEvent('identify', (s) => s.serverId === guildId);
    expect(connection.rejoin()).toBe(true);
    const [second] = await identified;
    await entersState(connection, VoiceConnectionStatus.Ready, 20_000);
    expect(joins).toHaveLength(2);
    expect(second.ssrc).not.toBe(session.ssrc);
    // The listener was reset as the sole member; the new session and it make a new group.
    await server.waitForDave(guildId);
  });

  it('GIVEN playback WHEN the server closes with 4006 THEN the client signals again, identifies a new session and playback continues', async () => {
    const guildId = '300000000000000003';
    const { connection, statuses, joins, session } = await joinAndPlay(guildId);
    const identified = server.waitForEvent('identify', (s) => s.serverId === guildId && s !== session);

    server.closeConnection(guildId, 4006);
    const [second] = await identified;
    await server.waitForEvent('speaking', (s, { speaking }) => s === second && speaking === 0);

    expect(joins).toHaveLength(2); // op 4 re-sent by the library on its own
    expect(session.resumable).toBe(false);
    expect(session.resumes).toBe(0);
    expect(second.ssrc).not.toBe(session.ssrc);
    expect(server.packets.filter((p) => p.ssrc === second.ssrc && !p.silent).length).toBeGreaterThan(10);
    // A new ssrc is a new utterance; together they still hold the whole 1 s.
    expect(server.utterances(guildId).map((u) => u.ssrc)).toEqual([session.ssrc, second.ssrc]);
    expect(totalAudioMs(guildId)).toBeGreaterThan(900);
    expect(totalAudioMs(guildId)).toBeLessThan(1100);
    expect(statuses).toEqual(['signalling', 'connecting', 'ready', 'signalling', 'connecting', 'ready']);
    expectE2eeTail(second.ssrc);
    expect(connection.state.status).toBe(VoiceConnectionStatus.Ready);
  });
});
