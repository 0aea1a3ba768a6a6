import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { pipeline, Readable } from 'node:stream';
import { AudioResource, createAudioResource, StreamType } from '@discordjs/voice';
import prism from 'prism-media';
import { Mp3OpusStream } from '../audio/mp3-opus.ts';
import { changesLoudness, GainedOpusStream } from '../audio/gain.ts';
import type { PlaySource } from '../util/moments.ts';
import { VoiceSessionError } from './errors.ts';

/** One clip as the player takes it (see PlayableAudio in session.ts). */
interface Clip {
  oggPath?: string;
  mp3Path?: string;
  mp3?: Buffer;
  /** The member's volume (0 to 2; absent = 1): applied to the decoded samples (src/audio/gain.ts). */
  volume?: number;
}

/**
 * The resource for one clip; never inlineVolume (it forces per-frame re-encoding). Cached Ogg Opus
 * needs no encoding at all; an MP3 (a cache miss) is decoded and encoded in this
 * process as it plays (src/audio/mp3-opus.ts); `playback: 'mp3'` runs ffmpeg on every play, the
 * baseline `npm run bench:voice` compares against.
 */
export async function resourceFor(
  audio: Clip,
  playback: 'cached' | 'mp3',
  guildId: string,
): Promise<{ resource: AudioResource; source: PlaySource }> {
  if (playback === 'mp3') {
    // The baseline only: the library's inline volume (Opus encoding on this thread) for a volume not 1.
    const loudness = changesLoudness(audio.volume);
    const resource = createAudioResource(audio.mp3Path ?? Readable.from([audio.mp3 ?? Buffer.alloc(0)]), {
      inputType: StreamType.Arbitrary,
      inlineVolume: loudness,
    });
    if (loudness) resource.volume?.setVolume(audio.volume!);
    return { resource, source: 'mp3-ffmpeg' };
  }
  // A cached clip straight from its demuxer: no generator between it and the player.
  if (audio.oggPath) return { resource: opusResource(withVolume(oggPackets(audio.oggPath), audio.volume)), source: 'ogg' };
  return { resource: opusResource(clipPackets([audio], guildId)), source: 'mp3-in-process' };
}

/** Silence frames after a resource's last packet, as createAudioResource adds (no glitch at the end). */
const SILENCE_PADDING_FRAMES = 5;

/**
 * A resource of Opus packets as they are, with no transformer of the library's. Not through
 * createAudioResource: it looks for a transformer pipeline even for Opus, and the first look in a
 * thread builds the library's transformer graph, which runs `ffmpeg -h` synchronously
 * (prism-media's FFmpeg.getInfo), stopping the packet clock of every call in the worker for
 * 50-200 ms at its first clip.
 */
export function opusResource(packets: Readable): AudioResource {
  return new AudioResource([], [packets], null, SILENCE_PADDING_FRAMES);
}

/**
 * The Opus packets of a cached Ogg Opus file. One pipeline: a file gone missing ends the packets
 * with its error (the player reports it), not the process; a skip, /clear or leave that destroys
 * the packets mid-clip closes the file too (pipe() alone would keep its descriptor open for good).
 */
function oggPackets(path: string): Readable {
  return pipeline(createReadStream(path), new prism.opus.OggDemuxer(), () => {});
}

/**
 * The Opus packets of several clips, one after the other, as one stream (a name and
 * its line with no gap between them): cached Ogg Opus demuxed, an MP3 not cached yet (a miss)
 * decoded and encoded in this process as it plays.
 */
export function clipPackets(clips: readonly Clip[], guildId: string): Readable {
  return Readable.from(
    (async function* () {
      for (const clip of clips) {
        if (clip.oggPath) {
          yield* withVolume(oggPackets(clip.oggPath), clip.volume);
        } else {
          const mp3 = clip.mp3 ?? (await readMp3(clip, guildId));
          yield* new Mp3OpusStream(mp3, changesLoudness(clip.volume) ? { volume: clip.volume } : {});
        }
      }
    })(),
    { objectMode: true },
  );
}

/** Cached Opus packets at a member's volume: decoded, scaled and encoded again only when it is not 1. */
function withVolume(packets: Readable, volume: number | undefined): Readable {
  return changesLoudness(volume) ? pipeline(packets, new GainedOpusStream(volume), () => {}) : packets;
}

/** The clips of one utterance, each at the utterance's volume (its parts carry none of their own). */
export function clipsOf(audio: Clip & { parts?: Clip[] }): Clip[] {
  const parts = audio.parts ?? [audio];
  const volume = audio.volume;
  return volume === undefined ? parts : parts.map((p) => ({ ...p, volume }));
}

async function readMp3(clip: Clip, guildId: string): Promise<Buffer> {
  if (!clip.mp3Path) return Buffer.alloc(0);
  try {
    return await readFile(clip.mp3Path);
  } catch (error) {
    throw new VoiceSessionError('playback_failed', { guildId, cause: error });
  }
}
