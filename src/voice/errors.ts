// Errors of src/voice: one place, stable codes (STYLE.md #4, /work/brief/ERRORS.md).

export type VoiceSessionErrorCode = 'join_timeout' | 'not_ready' | 'destroyed' | 'playback_failed' | 'no_session';

/** Default messages, one per code (tests check every code from this table). */
export const VOICE_ERROR_MESSAGES: Readonly<Record<VoiceSessionErrorCode, string>> = {
  join_timeout: 'could not connect to the voice channel in time',
  not_ready: 'the voice connection is not ready',
  destroyed: 'the voice session was closed',
  playback_failed: 'playback failed',
  no_session: 'the bot is not in a voice channel in this guild',
};

/** A guild's voice session could not join, play, or went away; `guildId` says where. */
export class VoiceSessionError extends Error {
  override name = 'VoiceSessionError';
  readonly code: VoiceSessionErrorCode;
  readonly guildId: string;
  constructor(code: VoiceSessionErrorCode, options: { guildId: string; message?: string; cause?: unknown }) {
    super(options.message ?? VOICE_ERROR_MESSAGES[code], { cause: options.cause });
    this.code = code;
    this.guildId = options.guildId;
  }
}
