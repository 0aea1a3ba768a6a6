/** Stable codes of audio errors (transcoding and the audio cache). */
export type AudioErrorCode =
  | 'FFMPEG_NOT_FOUND'
  | 'TRANSCODE_FAILED'
  | 'TRANSCODE_TIMEOUT'
  | 'TRANSCODE_ABORTED'
  | 'CACHE_BAD_KEY'
  | 'CACHE_WRITE_FAILED';

const MESSAGES = {
  FFMPEG_NOT_FOUND: 'ffmpeg could not be started (set FFMPEG_PATH or install ffmpeg)',
  TRANSCODE_FAILED: 'ffmpeg could not convert the MP3 to Ogg Opus',
  TRANSCODE_TIMEOUT: 'ffmpeg took too long to convert the MP3 to Ogg Opus',
  TRANSCODE_ABORTED: 'the conversion to Ogg Opus was aborted',
  CACHE_BAD_KEY: 'an audio cache key must be 64 lowercase hex characters (a sha256)',
  CACHE_WRITE_FAILED: 'the audio cache could not write its files',
} as const satisfies Record<AudioErrorCode, string>;

/** An audio error: `code` is stable, `message` adds the detail (never any chat text). */
export class AudioError extends Error {
  override name = 'AudioError';
  readonly code: AudioErrorCode;
  constructor(code: AudioErrorCode, detail?: string, options?: ErrorOptions) {
    super(detail ? `${MESSAGES[code]}: ${detail}` : MESSAGES[code], options);
    this.code = code;
  }
}
