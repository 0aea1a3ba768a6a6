import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { pipeline, Readable } from 'node:stream';
import { AudioResource, createAudioResource, StreamType } from '@discordjs/voice';
import prism from 'prism-media';
import { Mp3OpusStream } from '../audio/mp3-opus.ts';
import type { PlaySource } from '../util/moments.ts';
import { VoiceSessionError } from './errors.ts';

/** One clip as the player takes it (see PlayableAudio in session.ts). */
interface Clip {
  oggPath?: string;
  mp3Path?: string;
  mp3?: Buffer;
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
    return {
      resource: createAudioResource(audio.mp3Path ?? Readable.from([audio.mp3 ?? Buffer.alloc(0)]), { inputType: StreamType.Arbitrary }),
      source: 'mp3-ffmpeg',
    };
  }
  // A cached clip straight from its demuxer: no generator between it and the player.
  if (audio.oggPath) return { resource: opusResource(oggPackets(audio.oggPath)), source: 'ogg' };
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
          yield* oggPackets(clip.oggPath);
        } else {
          yield* new Mp3OpusStream(clip.mp3 ?? (await readMp3(clip, guildId)));
        }
      }
    })(),
    { objectMode: true },
  );
}

async function readMp3(clip: Clip, guildId: string): Promise<Buffer> {
  if (!clip.mp3Path) return Buffer.alloc(0);
  try {
    return await readFile(clip.mp3Path);
  } catch (error) {
    throw new VoiceSessionError('playback_failed', { guildId, cause: error });
  }
}
