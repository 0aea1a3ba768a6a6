import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { createAudioResource, StreamType, type AudioResource } from '@discordjs/voice';
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
 * needs no encoding at all; an MP3 (a cache miss, issue 12 §4) is decoded and encoded in this
 * process as it plays (src/audio/mp3-opus.ts); `playback: 'mp3'` runs ffmpeg on every play, the
 * baseline `npm run bench:voice` compares against.
 */
export async function resourceFor(audio: Clip, playback: 'cached' | 'mp3', guildId: string): Promise<{ resource: AudioResource; source: PlaySource }> {
  const cached = playback === 'cached';
  if (audio.oggPath && cached) return { resource: createAudioResource(createReadStream(audio.oggPath), { inputType: StreamType.OggOpus }), source: 'ogg' };
  if (!cached) {
    return { resource: createAudioResource(audio.mp3Path ?? Readable.from([audio.mp3 ?? Buffer.alloc(0)]), { inputType: StreamType.Arbitrary }), source: 'mp3-ffmpeg' };
  }
  let mp3 = audio.mp3;
  if (!mp3 && audio.mp3Path) {
    try {
      mp3 = await readFile(audio.mp3Path);
    } catch (error) {
      throw new VoiceSessionError('playback_failed', { guildId, cause: error });
    }
  }
  return { resource: createAudioResource(new Mp3OpusStream(mp3 ?? Buffer.alloc(0)), { inputType: StreamType.Opus }), source: 'mp3-in-process' };
}

/** The Opus packets of several Ogg Opus files, one after the other, as one stream. */
export function opusPackets(paths: readonly string[]): Readable {
  return Readable.from(
    (async function* () {
      for (const path of paths) {
        const demuxer = new prism.opus.OggDemuxer();
        // A file gone missing ends the stream with its error (the player reports it), not the process.
        const file = createReadStream(path).on('error', (error) => demuxer.destroy(error));
        yield* file.pipe(demuxer);
      }
    })(),
    { objectMode: true },
  );
}
