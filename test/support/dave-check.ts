/**
 * Checks on what the fake voice server received, for tests that audio was end-to-end encrypted:
 * pure functions over `ReceivedPacket`s, so a negative control can show they catch plain audio.
 */
import type { FakeVoiceServer, ReceivedPacket, Utterance } from '@yomiage/local-discord';
import { OPUS_SILENCE_FRAME } from '@yomiage/local-discord/voice/dave/frame';
import { getVoiceConnection } from '@discordjs/voice';
import { workerVoicePrivacyCode } from '../../src/voice/remote-session.ts';

const SAMPLE_RATE = 48_000;
const CHANNELS = 2;

/**
 * Every frame of the resource an utterance belongs to, from the first frame to speaking off,
 * without the silence frames @discordjs/voice adds at the end (DAVE leaves those unencrypted).
 */
export function playedFrames(server: FakeVoiceServer, utterance: Utterance): ReceivedPacket[] {
  const first = utterance.packets[0]!;
  return server.packets.filter(
    (p) => p.ssrc === first.ssrc && p.speakingOffCount === first.speakingOffCount && !p.frame.equals(OPUS_SILENCE_FRAME),
  );
}

/** Decoded audio duration of `frames` in milliseconds (nothing for a frame that did not decode). */
export function decodedMs(frames: readonly ReceivedPacket[]): number {
  return frames.reduce((ms, p) => ms + (p.pcm.length / CHANNELS / SAMPLE_RATE) * 1000, 0);
}

/**
 * Why `frames` were not end-to-end encrypted to every one of `listenerIds`, one line per kind of
 * failure with how many frames it hit; empty when every frame carried the DAVE framing, differed
 * from its plaintext, was decrypted by each listener and decoded as Opus.
 */
export function e2eeProblems(frames: readonly ReceivedPacket[], listenerIds: readonly string[]): string[] {
  if (frames.length === 0) return ['no frames'];
  const problems: string[] = [];
  const count = (what: string, failing: (p: ReceivedPacket) => boolean) => {
    const n = frames.filter(failing).length;
    if (n > 0) problems.push(`${n} of ${frames.length} frames ${what}`);
  };
  count('carry no DAVE framing', (p) => !p.daveFramed);
  // Opus is encrypted whole (daveprotocol.com, "OPUS"): no plaintext byte run survives.
  count('contain their plaintext', (p) => p.frame.includes(p.opus));
  for (const id of listenerIds) {
    for (const outcome of ['plain', 'failed', undefined] as const) {
      count(`were ${outcome ?? 'not offered'} for listener ${id}`, (p) => p.heardBy[id] === outcome);
    }
  }
  count('did not decode as Opus', (p) => p.decodeError || p.undecryptable);
  return problems;
}

/** Whether a davey session (say, a removed listener's old one) can decrypt `frame` from `userId`. */
export function canDecrypt(
  session: { decrypt(userId: string, mediaType: number, packet: Buffer): Buffer },
  userId: string,
  frame: Buffer,
): boolean {
  try {
    session.decrypt(userId, 0, frame);
    return true;
  } catch {
    return false;
  }
}

/**
 * The bot's privacy code (DAVE) for `guildId`'s call (of connection `group`), whether its
 * connection runs on this thread or in a voice worker.
 */
export function botPrivacyCode(guildId: string, group?: string): string | undefined {
  return getVoiceConnection(guildId, group)?.voicePrivacyCode ?? workerVoicePrivacyCode(guildId, group);
}
