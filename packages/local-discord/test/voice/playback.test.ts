import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import {
  AudioPlayerStatus,
  createAudioPlayer,
  createAudioResource,
  entersState,
  StreamType,
  VoiceConnectionStatus,
  type AudioPlayer,
  type VoiceConnection,
} from '@discordjs/voice';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeVoiceServer, trustCertificate, type FakeVoiceServer } from '../../src/voice/server.ts';
import { BOT_USER_ID, join, LISTENER_USER_ID, makeSineFiles } from './helpers.ts';

let server: FakeVoiceServer;
let dir: string;
let files: { mp3: string; ogg: string };
const cleanups: (() => void)[] = [];

beforeAll(async () => {
  dir = await mkdtemp(joinPath(tmpdir(), 'voice-fake-'));
  [server, files] = await Promise.all([startFakeVoiceServer({ expectedToken: 'fake-voice-token' }), makeSineFiles(dir)]);
  trustCertificate(server.caCertPem);
});

afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function track(connection: VoiceConnection, player: AudioPlayer): void {
  player.on('error', () => {});
  cleanups.push(() => {
    player.stop(true);
    if (connection.state.status !== VoiceConnectionStatus.Destroyed) connection.destroy();
  });
}

describe('fake voice server with the real @discordjs/voice', () => {
  it('GIVEN a join WHEN an MP3 plays THEN the server hears about 1 s of clearly audible audio', async () => {
    const guildId = '200000000000000001';
    const { connection } = join(server, guildId);
    const player = createAudioPlayer();
    track(connection, player);
    await entersState(connection, VoiceConnectionStatus.Ready, 20_000);

    const session = server.sessions.find((s) => s.serverId === guildId);
    expect(session).toMatchObject({ userId: BOT_USER_ID, mode: 'aead_aes256_gcm_rtpsize', closed: false });
    expect(session).toMatchObject({ maxDaveProtocolVersion: 1, daveProtocolVersion: 1 });
    await server.waitForDave(guildId);

    connection.subscribe(player);
    const speakingOff = server.waitForEvent('speaking', (s, { speaking }) => s === session && speaking === 0);
    player.play(createAudioResource(files.mp3));
    const utterance = await server.waitForAudio({ guildId, minDurationMs: 100 });
    await speakingOff;

    expect(utterance.durationMs).toBeGreaterThan(900);
    expect(utterance.durationMs).toBeLessThan(1100);
    expect(utterance.rmsDb).toBeGreaterThan(-40);
    expect(utterance).toMatchObject({ plainFrames: 0, ssrc: session?.ssrc });
    expect(utterance.packets.filter((p) => !p.silent && p.heardBy[LISTENER_USER_ID] !== 'decrypted')).toEqual([]);
    expect(server.utterances(guildId)).toHaveLength(1);
    // The library ends a resource with silence frames, then speaking off.
    expect(server.packets.filter((p) => p.guildId === guildId).at(-1)?.silent).toBe(true);
    expect(session?.speaking).toBe(0);
    await entersState(player, AudioPlayerStatus.Idle, 10_000);
  });

  it('GIVEN a join WHEN an Ogg Opus stream plays THEN the server hears about 1 s of audio', async () => {
    const guildId = '200000000000000002';
    const { connection } = join(server, guildId);
    const player = createAudioPlayer();
    track(connection, player);
    await entersState(connection, VoiceConnectionStatus.Ready, 20_000);
    await server.waitForDave(guildId);

    connection.subscribe(player);
    player.play(createAudioResource(createReadStream(files.ogg), { inputType: StreamType.OggOpus }));
    const utterance = await server.waitForAudio({ guildId, minDurationMs: 100 });

    expect(utterance.durationMs).toBeGreaterThan(900);
    expect(utterance.durationMs).toBeLessThan(1100);
    expect(utterance.rmsDb).toBeGreaterThan(-40);
    expect(utterance.plainFrames).toBe(0);
  });

  it('GIVEN two resources played back to back THEN the server hears two utterances', async () => {
    const guildId = '200000000000000003';
    const { connection } = join(server, guildId);
    const player = createAudioPlayer();
    track(connection, player);
    await entersState(connection, VoiceConnectionStatus.Ready, 20_000);
    await server.waitForDave(guildId);
    connection.subscribe(player);

    let played = 0;
    const playNext = () => {
      played++;
      player.play(createAudioResource(createReadStream(files.ogg), { inputType: StreamType.OggOpus }));
    };
    player.on(AudioPlayerStatus.Idle, () => {
      if (played < 2) playNext();
    });
    playNext();
    const first = await server.waitForAudio({ guildId, minDurationMs: 900 });
    const second = await server.waitForAudio({ guildId, minDurationMs: 900, startedAfter: first.end + 0.001 });

    expect(second.start).toBeGreaterThan(first.end);
    expect(server.utterances(guildId).map((u) => Math.round(u.durationMs / 100))).toEqual([10, 10]);
    expect(server.utterances(guildId).map((u) => u.plainFrames)).toEqual([0, 0]);
  });
});
