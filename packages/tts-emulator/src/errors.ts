/**
 * Errors the emulator raises inside itself. Clients never see them:
 * an endpoint that fails this way answers the spec's 500 (standard) or fails the job (advanced).
 */
import { codedError } from '@yomiage/coded-error';

/** The emulator could not make an audio file. */
export class EmulatorError extends codedError({
  mp3_encoder_failed: 'the MP3 encoder (LAME in WebAssembly) failed to encode the audio',
  ffmpeg_unavailable: 'ffmpeg could not be started to encode the espeak-ng reading',
  ffmpeg_failed: 'ffmpeg failed to encode the espeak-ng reading',
  espeak_unavailable: 'espeak-ng could not be started to read the text',
  espeak_failed: 'espeak-ng failed to read the text',
}) {
  override name = 'EmulatorError';
}
