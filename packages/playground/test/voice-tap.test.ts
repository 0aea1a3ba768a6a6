/**
 * What the playground page hears: the real @discordjs/voice plays into the local voice server, a
 * simulated member decrypts it (DAVE), and the tap passes on mono PCM and one utterance per clip.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { AudioPlayerStatus, createAudioPlayer, createAudioResource, entersState, VoiceConnectionStatus } from '@discordjs/voice';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeVoiceServer, trustCertificate, type FakeVoiceServer } from '@yomiage/local-discord';
import { VoiceTap, type TappedUtterance } from '../src/voice-tap.ts';
import { join, LISTENER_USER_ID, makeSineFiles } from '@yomiage/local-discord/test/voice/helpers';

const guildId = '210000000000000001';
let server: FakeVoiceServer;
let dir: string;
let files: { mp3: string; ogg: string };

beforeAll(async () => {
  dir = await mkdtemp(joinPath(tmpdir(), 'voice-tap-'));
  [server, files] = await Promise.all([
    startFakeVoiceServer({ expectedToken: 'fake-voice-token', maxRetainedPackets: 20 }),
    makeSineFiles(dir),
  ]);
  trustCertificate(server.caCertPem);
});
afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the voice tap', () => {
  it('GIVEN two clips played back to back THEN the page gets their audio as mono PCM and two utterances of about 1 s, end-to-end encrypted, heard by the member', async () => {
    const identified: number[] = [];
    const tap = new VoiceTap(server, {
      guildId,
      identify: (contour, complete) => {
        if (complete) identified.push(contour.length);
        return complete ? { text: `clip of ${contour.length} frames`, voice: 'test' } : undefined;
      },
    });
    const pcm: Int16Array[] = [];
    const updates: TappedUtterance[] = [];
    tap.on('audio', (frame) => pcm.push(frame));
    tap.on('utterance', (u) => updates.push(u));
    const { connection } = join(server, guildId); // a simulated member (LISTENER_USER_ID) is in the call
    const player = createAudioPlayer();
    player.on('error', () => {});
    try {
      await entersState(connection, VoiceConnectionStatus.Ready, 20_000);
      await server.waitForDave(guildId);
      connection.subscribe(player);
      for (let i = 0; i < 2; i++) {
        player.play(createAudioResource(files.mp3));
        await entersState(player, AudioPlayerStatus.Playing, 10_000);
        await entersState(player, AudioPlayerStatus.Idle, 10_000);
      }
      await expect.poll(() => tap.utterances.filter((u) => !u.playing).length, { timeout: 5000 }).toBe(2);
    } finally {
      player.stop(true);
      connection.destroy();
      tap.close();
    }
    for (const u of tap.utterances) {
      expect(u.durationMs).toBeGreaterThan(900);
      expect(u.durationMs).toBeLessThan(1100);
      expect(u.rmsDb).toBeGreaterThan(-40);
      expect(u).toMatchObject({ endToEndEncrypted: true, heardBy: [LISTENER_USER_ID], playing: false, voice: 'test' });
    }
    // Each was labelled once it ended, from its own contour (one frame per 20 ms packet).
    expect(identified).toHaveLength(2);
    expect(updates.filter((u) => u.playing).length).toBeGreaterThanOrEqual(2);
    // Mono 48 kHz, 20 ms a packet: about two seconds of it, and loud.
    expect(pcm.every((f) => f.length === 960)).toBe(true);
    expect(pcm.length).toBeGreaterThan(95);
    const loud = pcm.filter((f) => f.some((s) => Math.abs(s) > 2000)); // the sine peaks at 1/8 of full scale
    expect(loud.length).toBeGreaterThan(90);
    // The server kept only the newest packets (a long-running playground bounds its memory).
    expect(server.packets.length).toBe(20);
  });

  it('GIVEN no member of the page left in the call THEN the page hears nothing, though the bot plays', async () => {
    const tap = new VoiceTap(server, { guildId: '210000000000000002' });
    const pcm: Int16Array[] = [];
    tap.on('audio', (frame) => pcm.push(frame));
    const { connection } = join(server, '210000000000000002');
    const player = createAudioPlayer();
    player.on('error', () => {});
    try {
      await entersState(connection, VoiceConnectionStatus.Ready, 20_000);
      await server.waitForDave('210000000000000002');
      // The member leaves: the bot is alone in the call.
      for (const listener of server.dave.listeners('210000000000000002')) server.dave.detachListener(listener);
      connection.subscribe(player);
      player.play(createAudioResource(files.mp3));
      await entersState(player, AudioPlayerStatus.Playing, 10_000);
      await entersState(player, AudioPlayerStatus.Idle, 10_000);
    } finally {
      player.stop(true);
      connection.destroy();
      tap.close();
    }
    // The bot did play (the server received loud audio from it) to a call with nobody of the page in it.
    const sent = server.packets.filter((p) => p.guildId === '210000000000000002' && !p.silent);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((p) => Object.keys(p.heardBy).length === 0)).toBe(true);
    expect(pcm).toEqual([]);
    expect(tap.utterances).toEqual([]);
  });
});
