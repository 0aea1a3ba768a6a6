import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
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
  // A cached clip: the file through the Ogg demuxer, as one pipeline (no generator between them).
  if (audio.oggPath) return { resource: opusResource(createReadStream(audio.oggPath), new prism.opus.OggDemuxer()), source: 'ogg' };
  return { resource: opusResource(clipPackets([audio], guildId)), source: 'mp3-in-process' };
}

/** Silence frames after a resource's last packet, as createAudioResource adds (no glitch at the end). */
const SILENCE_PADDING_FRAMES = 5;

/**
 * A resource of the Opus packets the last of `streams` gives (the streams piped one into the next,
 * all destroyed together), with no transformer of the library's. Not through createAudioResource:
 * it looks for a transformer pipeline even for Opus, and the first look in a thread builds the
 * library's transformer graph, which runs `ffmpeg -h` synchronously (prism-media's
 * FFmpeg.getInfo), stopping the packet clock of every call in the worker for 50-200 ms at its
 * first clip.
 */
export function opusResource(...streams: [Readable, ...Readable[]]): AudioResource {
  return new AudioResource([], streams, null, SILENCE_PADDING_FRAMES);
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
          const demuxer = new prism.opus.OggDemuxer();
          // A file gone missing ends the stream with its error (the player reports it), not the process.
          const file = createReadStream(clip.oggPath).on('error', (error) => demuxer.destroy(error));
          try {
            yield* file.pipe(demuxer);
          } finally {
            // A skip, /clear or leave destroys this stream mid-clip: pipe() never closes its
            // source when the destination goes, so the file's descriptor would stay open for good.
            file.destroy();
          }
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
