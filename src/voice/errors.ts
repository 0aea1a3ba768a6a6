import { codedError } from '@yomiage/coded-error';

// Errors of src/voice: one place, stable codes (docs/architecture.md, "Errors").

/** A guild's voice session could not join, play, or went away; `guildId` says where. */
export class VoiceSessionError extends codedError({
  join_timeout: 'could not connect to the voice channel in time',
  not_ready: 'the voice connection is not ready',
  destroyed: 'the voice session was closed',
  playback_failed: 'playback failed',
  no_session: 'the bot is not in a voice channel in this guild',
  play_timeout: 'the clip did not finish playing within its length and a margin',
  interrupted: 'the voice connection was replaced while this call was under way',
  fault_injected: 'a voice worker fault injected by a test',
}) {
  override name = 'VoiceSessionError';
  readonly guildId: string;
  constructor(code: VoiceSessionErrorCode, options: { guildId: string; message?: string; cause?: unknown }) {
    super(code, options);
    this.guildId = options.guildId;
  }
}

export type VoiceSessionErrorCode = VoiceSessionError['code'];
