/**
 * What a listener hears: packets grouped into utterances per speaker, and their loudness. Pure
 * functions over received packets, so they can be tested on hand-made packet runs.
 */
import { FRAME_MS, VOICE_CHANNELS, VOICE_SAMPLE_RATE } from '../voice-format.ts';
import { OPUS_SILENCE_FRAME } from './dave/frame.ts';
import type { ReceivedPacket, Utterance } from './types.ts';

/** RMS loudness of 16-bit samples in dBFS (-Infinity for all zeros or no samples). */
export function rmsDb(samples: Int16Array | readonly Int16Array[]): number {
  const parts = samples instanceof Int16Array ? [samples] : samples;
  let sum = 0;
  let count = 0;
  for (const part of parts) {
    sum += sumOfSquares(part);
    count += part.length;
  }
  if (count === 0 || sum === 0) return -Infinity;
  return 20 * Math.log10(Math.sqrt(sum / count) / 32768);
}

/**
 * Each packet's PCM is summed once: tests poll `utterances()` while audio arrives, and every poll
 * measures every utterance heard so far (summing all of it each time was most of a voice test's CPU).
 */
const sums = new WeakMap<Int16Array, number>();
function sumOfSquares(part: Int16Array): number {
  let sum = sums.get(part);
  if (sum === undefined) {
    sum = 0;
    for (const s of part) sum += s * s;
    sums.set(part, sum);
  }
  return sum;
}

export interface GroupingOptions {
  /** A pause in arrival longer than this ends an utterance. */
  gapMs: number;
  /** This much consecutive silence (decoded duration) ends an utterance. */
  silenceMs: number;
  /** The current `now()`, to tell whether the last run has ended by a gap. */
  now: number;
  /** Each ssrc's current speaking-off count: a higher count than the run's means it ended. */
  speakingOffCounts?: ReadonlyMap<number, number>;
}

/**
 * Groups packets (in arrival order) into utterances per ssrc. An utterance runs from a non-silent
 * packet to the last non-silent one before a break: a speaking-off signal, `silenceMs` of
 * consecutive silence, or an arrival gap over `gapMs`. Shorter silences stay inside (pauses
 * between sentences; @discordjs/voice also slips one silence frame in after a resume).
 * @discordjs/voice ends each resource with 5 silence frames and speaking 0, so two messages played
 * back to back are two utterances.
 */
export function groupUtterances(packets: readonly ReceivedPacket[], options: GroupingOptions): Utterance[] {
  const { gapMs, silenceMs, now, speakingOffCounts } = options;
  const done: Utterance[] = [];
  const open = new Map<number, { packets: ReceivedPacket[]; trailingSilenceMs: number }>();
  const finish = (ssrc: number) => {
    const run = open.get(ssrc);
    open.delete(ssrc);
    if (run) done.push(toUtterance(run.packets, true));
  };
  for (const packet of packets) {
    const run = open.get(packet.ssrc);
    const last = run?.packets.at(-1);
    if (last && (packet.receivedAt - last.receivedAt > gapMs || packet.speakingOffCount !== last.speakingOffCount)) {
      finish(packet.ssrc);
    }
    const current = open.get(packet.ssrc);
    if (packet.silent) {
      if (!current) continue;
      current.trailingSilenceMs += packetMs(packet);
      if (current.trailingSilenceMs >= silenceMs) finish(packet.ssrc);
      else current.packets.push(packet);
      continue;
    }
    if (current) {
      current.packets.push(packet);
      current.trailingSilenceMs = 0;
    } else {
      open.set(packet.ssrc, { packets: [packet], trailingSilenceMs: 0 });
    }
  }
  for (const [ssrc, run] of open) {
    const last = run.packets.at(-1)!;
    const spokeOff = (speakingOffCounts?.get(ssrc) ?? last.speakingOffCount) > last.speakingOffCount;
    done.push(toUtterance(run.packets, spokeOff || now - last.receivedAt > gapMs));
  }
  return done.sort((a, b) => a.start - b.start);
}

/** Decoded duration of one packet (one frame assumed when it did not decode). */
function packetMs(packet: ReceivedPacket): number {
  return packet.pcm.length > 0 ? (packet.pcm.length / VOICE_CHANNELS / VOICE_SAMPLE_RATE) * 1000 : FRAME_MS;
}

function toUtterance(run: ReceivedPacket[], complete: boolean): Utterance {
  // Trailing silence (kept while it might have been a pause) is not part of the utterance.
  let lastLoud = run.length - 1;
  while (lastLoud > 0 && run[lastLoud]!.silent) lastLoud--;
  const packets = run.slice(0, lastLoud + 1);
  const first = packets[0]!;
  const last = packets.at(-1)!;
  return {
    guildId: first.guildId,
    ...(first.channelId === undefined ? {} : { channelId: first.channelId }),
    ...(first.userId === undefined ? {} : { userId: first.userId }),
    ssrc: first.ssrc,
    start: first.receivedAt,
    end: last.receivedAt,
    durationMs: packets.reduce((ms, p) => ms + packetMs(p), 0),
    rmsDb: rmsDb(packets.filter((p) => !p.silent).map((p) => p.pcm)),
    complete,
    daveFrames: packets.filter((p) => p.daveFramed).length,
    plainFrames: packets.filter((p) => !p.daveFramed && !p.frame.equals(OPUS_SILENCE_FRAME)).length,
    packets,
  };
}
