import { codedError } from '@yomiage/coded-error';

/** An audio error (transcoding, in-process decoding and the audio cache): `code` is stable, the message is the code's own plus a detail (never any chat text). */
export class AudioError extends codedError({
  transcode_failed: 'could not convert the MP3 to Ogg Opus (no audio could be decoded)',
  transcode_timeout: 'the conversion of the MP3 to Ogg Opus took too long',
  transcode_aborted: 'the conversion to Ogg Opus was aborted',
  decode_failed: 'the MP3 could not be decoded for playback',
  cache_bad_key: 'an audio cache key must be 64 lowercase hex characters (a sha256)',
  cache_write_failed: 'the audio cache could not write its files',
}) {
  override name = 'AudioError';
  constructor(code: AudioErrorCode, options: { detail?: string | undefined; cause?: unknown } = {}) {
    super(code, { message: options.detail ? `${AudioError.messages[code]}: ${options.detail}` : undefined, cause: options.cause });
  }
}

export type AudioErrorCode = AudioError['code'];
