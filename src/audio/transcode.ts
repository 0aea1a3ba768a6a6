import { AudioError } from './errors.ts';
import { Mp3OpusStream } from './mp3-opus.ts';
import { OggOpusWriter } from './ogg-opus.ts';
import { FRAME_SAMPLES } from '../util/voice-format.ts';

interface TranscodeOptions {
  /** Stop and fail after this long. */
  timeoutMs?: number;
  /** Opus bitrate in kbit/s. */
  bitrateKbps?: number;
  /** libopus application: `audio` favours fidelity, `voip` intelligibility. */
  application?: 'audio' | 'voip';
  /** Drop the silence before the first sound (default true). */
  trimLeadingSilence?: boolean;
  signal?: AbortSignal;
}

const DEFAULTS = {
  timeoutMs: 30_000,
  // Discord voice channels carry 64 kbit/s by default; more is wasted on speech.
  bitrateKbps: 64,
  application: 'audio',
  trimLeadingSilence: true,
} as const satisfies Required<Omit<TranscodeOptions, 'signal'>>;

/**
 * Packets encoded between two turns of the event loop (0.2 s of audio, about 3 ms of CPU): the
 * conversion shares the main thread with the gateway and with the packets fed to the voice threads
 * while a clip plays, so it never holds them up for long; an abort or the deadline is noticed too.
 */
const PACKETS_PER_TURN = 10;

/**
 * Converts an MP3 to Ogg Opus, 48 kHz stereo: what Discord voice carries, so the player can stream
 * it as StreamType.OggOpus without transcoding on every play. Made in this process by the same
 * decoder and encoder that play a cache miss (src/audio/mp3-opus.ts: the leading-silence cut,
 * bitrate and application), muxed by src/audio/ogg-opus.ts; no ffmpeg is started. Errors:
 * `transcode_failed` (no audio could be decoded), `transcode_timeout`, `transcode_aborted`.
 */
export async function mp3ToOggOpus(mp3: Buffer, options: TranscodeOptions = {}): Promise<Buffer> {
  const o = { ...DEFAULTS, ...options };
  const deadline = performance.now() + o.timeoutMs;
  const check = () => {
    if (o.signal?.aborted) throw new AudioError('transcode_aborted');
    if (performance.now() > deadline) throw new AudioError('transcode_timeout', { detail: `after ${o.timeoutMs} ms` });
  };
  check();
  const stream = new Mp3OpusStream(mp3, {
    bitrateKbps: o.bitrateKbps,
    application: o.application,
    trimLeadingSilence: o.trimLeadingSilence,
  });
  let writer: OggOpusWriter | undefined;
  try {
    let count = 0;
    for await (const packet of stream) {
      writer ??= new OggOpusWriter({ inputSampleRate: stream.inputSampleRate });
      writer.push(packet as Buffer, FRAME_SAMPLES);
      if (++count % PACKETS_PER_TURN === 0) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        check();
      }
    }
    check();
  } catch (error) {
    stream.destroy();
    if (error instanceof AudioError && error.code !== 'decode_failed') throw error;
    throw new AudioError('transcode_failed', { detail: (error as Error).message, cause: error });
  }
  // Silence only (all of it cut) still makes a valid, empty stream.
  return (writer ?? new OggOpusWriter({ inputSampleRate: stream.inputSampleRate || 48_000 })).end(stream.samples);
}
