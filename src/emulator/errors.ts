/**
 * Errors the emulator raises inside itself. Clients never see them: an endpoint that fails this
 * way answers the spec's 500 (standard) or fails the job (advanced), see server.ts and poll.ts.
 */

export type EmulatorErrorCode = 'ffmpeg_unavailable' | 'ffmpeg_failed';

/** Default messages, one per code. */
export const EMULATOR_ERROR_MESSAGES = {
  ffmpeg_unavailable: 'ffmpeg could not be started to make the audio',
  ffmpeg_failed: 'ffmpeg failed to encode the audio',
} as const satisfies Record<EmulatorErrorCode, string>;

/** The emulator could not make an audio file. */
export class EmulatorError extends Error {
  override name = 'EmulatorError';
  readonly code: EmulatorErrorCode;
  constructor(code: EmulatorErrorCode, options: { message?: string; cause?: unknown } = {}) {
    super(options.message ?? EMULATOR_ERROR_MESSAGES[code], { cause: options.cause });
    this.code = code;
  }
}
